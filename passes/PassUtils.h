//===- PassUtils.h - what method passes share -------------------*- C++ -*-===//
//
// Private to passes/: looking up declared state, creating it, building aten
// ops, and the driver the method passes apply their patterns with.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_PASSES_PASSUTILS_H
#define COMPOSER_PASSES_PASSUTILS_H

#include "composer/Dialect/Composer.h"

#include "mlir/IR/Builders.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"

#include <optional>
#include <string>

namespace composer {

/// The module's @forward; if it has none, emits "<pass>: no func.func
/// @forward" on the module and returns null.
mlir::func::FuncOp lookupForward(mlir::ModuleOp module,
                                 llvm::StringRef passName);

/// The parameter or buffer declaration `read` reads, or null. Passes hold
/// one `symbolTables` for their run, so each module is indexed once.
mlir::Operation *lookupStateDecl(GetParamOp read,
                                 mlir::SymbolTableCollection &symbolTables);

/// The parameter or buffer read `value` is, or is a view of (through
/// WeightView ops: weight standardization); null otherwise.
GetParamOp getStateRead(mlir::Value value);

/// The declared type of a parameter or buffer `value` reads
/// (composer.get_param, through WeightView ops), or null if `value` is not
/// such a read.
TorchTensorType getDeclaredStateType(mlir::Value value,
                                     mlir::SymbolTableCollection &symbolTables);

/// The module path a parameter read belongs to: "layer1.0.conv1" for a read
/// of @layer1.0.conv1.weight; nullopt if `value` is not a parameter read.
std::optional<std::string> getStateOwnerPath(mlir::Value value);

/// The module an op came from, as the importer named its location
/// ("layer1.0.conv1"); empty if unknown.
std::string getModulePath(mlir::Operation *op);

/// The channel count (dimension 1) of an NCHW `value`, from its type or by
/// following it back through layout-preserving ops and channel
/// concatenations to a convolution or to per-channel parameters; nullopt if
/// unknown.
std::optional<int64_t> inferChannels(mlir::Value value,
                                     mlir::SymbolTableCollection &symbolTables);

/// Declares a parameter or buffer (DeclOp: ParameterOp or BufferOp) named
/// `baseName`, made unique with a numeric suffix if something else has the
/// name, or reused if an identical declaration has it; `init` initializes
/// it. Returns a read of it built at `builder`'s insertion point.
/// `moduleSymbols` is the module's table from the pass's collection.
template <typename DeclOp>
mlir::Value createState(mlir::OpBuilder &builder,
                        mlir::SymbolTable &moduleSymbols,
                        llvm::StringRef baseName, TorchTensorType type,
                        mlir::Attribute init, mlir::Location loc);

/// Calls `fn` on each value `op` defines: its results and the arguments of
/// its regions' blocks.
void forEachDefinedValue(mlir::Operation *op,
                         llvm::function_ref<void(mlir::Value)> fn);

/// Gives each function of `module` that has a body the types its entry
/// block's arguments and its return's operands have now, after a rewrite
/// changed them.
void syncFunctionTypes(mlir::ModuleOp module);

/// Applies `patterns` once to each op nested in `root` that existed before,
/// in walk order: the method passes' driver. Unlike the greedy driver it
/// neither folds nor erases other ops, nor revisits what a pattern built, so
/// the result is exactly the patterns' rewrites.
void applyPatternsOnce(mlir::Operation *root,
                       const mlir::FrozenRewritePatternSet &patterns);

/// Builds composer constants and generic aten/prim nodes.
class AtenBuilder {
public:
  AtenBuilder(mlir::OpBuilder &builder, mlir::Location loc)
      : builder(builder), loc(loc) {}

  mlir::Value integer(int64_t value) {
    return builder.create<ConstantOp>(loc, IntType::get(builder.getContext()),
                                      builder.getI64IntegerAttr(value));
  }
  mlir::Value boolean(bool value) {
    return builder.create<ConstantOp>(loc, BoolType::get(builder.getContext()),
                                      builder.getBoolAttr(value));
  }
  mlir::Value none() {
    return builder.create<ConstantOp>(
        loc, TorchNoneType::get(builder.getContext()), builder.getUnitAttr());
  }
  mlir::Value floating(double value) {
    return builder.create<ConstantOp>(loc,
                                      TorchFloatType::get(builder.getContext()),
                                      builder.getF64FloatAttr(value));
  }
  /// An int[] constant.
  mlir::Value intList(llvm::ArrayRef<int64_t> values) {
    mlir::MLIRContext *ctx = builder.getContext();
    llvm::SmallVector<mlir::Attribute> elements;
    for (int64_t value : values)
      elements.push_back(builder.getI64IntegerAttr(value));
    return builder.create<ConstantOp>(loc,
                                      ListType::get(ctx, IntType::get(ctx)),
                                      builder.getArrayAttr(elements));
  }
  /// A generic TorchScript node of one result.
  mlir::Value node(AtenKind kind, mlir::ValueRange operands,
                   mlir::Type resultType) {
    return node(getAtenKindName(kind), operands, resultType);
  }
  mlir::Value node(llvm::StringRef kind, mlir::ValueRange operands,
                   mlir::Type resultType) {
    return builder
        .create<GenericOp>(loc, mlir::TypeRange{resultType}, kind, operands,
                           mlir::DictionaryAttr())
        .getResult(0);
  }

  /// A composer.if of one result: each callback builds its region's ops
  /// (at an insertion point inside it) and returns the value it yields.
  IfOp ifElse(mlir::Value condition, mlir::Type resultType,
              llvm::function_ref<mlir::Value()> thenBody,
              llvm::function_ref<mlir::Value()> elseBody) {
    auto ifOp =
        builder.create<IfOp>(loc, mlir::TypeRange{resultType}, condition);
    mlir::OpBuilder::InsertionGuard guard(builder);
    // Blocks through the builder, so that a rewriter sees them.
    builder.createBlock(&ifOp.getThenRegion());
    builder.create<YieldOp>(loc, thenBody());
    builder.createBlock(&ifOp.getElseRegion());
    builder.create<YieldOp>(loc, elseBody());
    return ifOp;
  }

private:
  mlir::OpBuilder &builder;
  mlir::Location loc;
};

} // namespace composer

#endif // COMPOSER_PASSES_PASSUTILS_H
