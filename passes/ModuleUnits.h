//===- ModuleUnits.h - modules' forwards as units of a rewrite --*- C++ -*-===//
//
// Private to passes/. A unit is the ops of one module's forward (a
// transformer layer, a residual block), found from the module paths the
// importer puts on every op. Activation checkpointing recomputes units and
// parameter sharding gathers each unit's weights; both find them here, and
// activation checkpointing's outlineIntoCheckpoint makes them regions.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_PASSES_MODULEUNITS_H
#define COMPOSER_PASSES_MODULEUNITS_H

#include "Report.h"

#include "composer/Dialect/Composer.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/GlobPattern.h"

#include <string>

namespace composer {

/// Whether the module at `path` is `unit` or inside it.
bool isWithinModule(llvm::StringRef path, llvm::StringRef unit);

/// Reads of constants, module attributes and state: cloned into a unit
/// that uses them rather than passed to it.
bool isStateOrConstantRead(mlir::Operation *op);

/// How a pass's `units` option chooses units: "blocks", or comma-separated
/// glob patterns of module paths.
struct UnitSelection {
  /// Empty for "blocks".
  llvm::SmallVector<llvm::GlobPattern> patterns;

  /// Parses `text`; emits "<passName>: units: ..." on `anchor` for a bad
  /// pattern or an empty list.
  static mlir::FailureOr<UnitSelection> parse(llvm::StringRef text,
                                              mlir::Operation *anchor,
                                              llvm::StringRef passName);

  /// The modules chosen in `forward`, in the order of their first op, the
  /// outermost where they nest. For blocks: the modules holding the
  /// residual blocks found in the graph (the add's module, or the branch's
  /// when the add is in the root); a block in no module of its own is
  /// skipped in `report`.
  llvm::SmallVector<std::string> findModules(mlir::func::FuncOp forward,
                                             SiteReport &report) const;
};

/// A unit as a rewrite sees it.
struct ModuleUnit {
  std::string path;
  /// Its ops in forward's body, in order, but reads: those stay where they
  /// are (TorchScript pools one module's constants for all), and the unit
  /// uses clones.
  llvm::SmallVector<mlir::Operation *> ops;
  /// Tensors from outside, in first-use order.
  llvm::SmallVector<mlir::Value> inputs;
  /// Reads from outside, cloned into the region.
  llvm::SmallVector<mlir::Value> clonedReads;
  /// Its results used after it.
  llvm::SmallVector<mlir::Value> outputs;
  /// The buffers it may write.
  llvm::SmallVector<GetParamOp> writtenBuffers;
};

/// The unit of module `path` in `body`, or the reason it cannot be one (and
/// the op the reason is about in `site`); an empty reason when the module
/// has no ops or is a composer.checkpoint already.
mlir::FailureOr<ModuleUnit>
collectModuleUnit(mlir::Block &body, llvm::StringRef path,
                  mlir::SymbolTableCollection &symbolTables,
                  std::string &reason, mlir::Operation *&site);

} // namespace composer

#endif // COMPOSER_PASSES_MODULEUNITS_H
