//===- GyroDropout.cpp - dropout from a fixed pool of masks ---------------===//
//
// GyroDropout (Lee et al. 2022) as METHODS.md states it and Composer's
// GyroDropoutLayer computes it: sigma masks over the features drawn once,
// tau of them active at a time, re-selected every `period` training steps.
// Every dropout whose feature count is known becomes a gyro_dropout reading
// per-module buffers (the masks, the active indices, the step counter) and
// one period buffer composer-train sets; so a checkpoint holds all of its
// state. Also the lowering of gyro_dropout to aten ops (the runtime has no
// kernel for it: an index_select and a multiply).
//
//===----------------------------------------------------------------------===//

#include "MethodLowering.h"
#include "PassUtils.h"
#include "Report.h"
#include "composer/Analysis/Projection.h"
#include "composer/Passes/Passes.h"
#include "composer/Support/GyroDropoutState.h"
#include "composer/Support/StatePaths.h"

#include "mlir/IR/PatternMatch.h"

#include <cstdio>
#include <cstdlib>

namespace composer {
#define GEN_PASS_DEF_GYRODROPOUT
#include "composer/Passes/Passes.h.inc"
} // namespace composer

using namespace mlir;
using namespace composer;

namespace {

/// A dropout the pass may replace: its input, its training flag and the
/// dimension its features are on (-1: the last, 1: the channels).
struct DropoutSite {
  Value input;
  Value train;
  bool inplace;
  int64_t featureDim;
};

std::optional<DropoutSite> matchDropout(Operation *op) {
  if (auto dropout = dyn_cast<DropoutOp>(op))
    return DropoutSite{dropout.getInput(), dropout.getTrain(),
                       dropout.getInplace(), -1};
  auto generic = dyn_cast<GenericOp>(op);
  // aten::dropout with a rate the importer could not make an attribute,
  // and nn.Dropout1d/2d/3d's feature_dropout: (input, p, train).
  if (!generic || generic->getNumOperands() != 3 ||
      generic->getNumResults() != 1)
    return std::nullopt;
  bool feature = generic.isKind(AtenKind::feature_dropout) ||
                 generic.isKind(AtenKind::feature_dropout_);
  if (!feature && !generic.isKind(AtenKind::dropout) &&
      !generic.isKind(AtenKind::dropout_))
    return std::nullopt;
  bool inplace = generic.getKindInfo()->has(AtenTrait::InPlace);
  return DropoutSite{generic->getOperand(0), generic->getOperand(2), inplace,
                     feature ? 1 : -1};
}

/// The declared sizes of the parameter `value` reads, looking through casts
/// (mixed precision reads weights through to_dtype); empty if unknown.
ArrayRef<int64_t> getDeclaredSizes(Value value,
                                   SymbolTableCollection &symbolTables) {
  while (auto cast = value.getDefiningOp<ToDtypeOp>())
    value = cast.getSelf();
  TorchTensorType type = getDeclaredStateType(value, symbolTables);
  if (!type || !type.getHasRank())
    return {};
  return type.getSizes();
}

/// Whether `op` gives its result operand 0's shape: a shape-preserving
/// kind, typed or generic, whose other operands are no tensors; a cast; the
/// gyro dropout a previous run inserted.
bool preservesShape(Operation *op) {
  if (isa<GyroDropoutOp, ToDtypeOp>(op))
    return true;
  if (op->getNumResults() != 1 || op->getNumOperands() == 0 ||
      !hasAtenTrait(op, AtenTrait::ShapePreserving))
    return false;
  return llvm::none_of(op->getOperands().drop_front(), [](Value operand) {
    return isa<TorchTensorType>(operand.getType());
  });
}

/// Finds the size of a value's last dimension from its type or from what
/// computes it: a projection's out features (nn.Linear or Conv1D), an
/// embedding's width, a layer norm's last normalized size, through elementwise
/// ops (broadcasting: a known size other than 1 wins). Memoized, since residual
/// streams reach the same values along many paths; one per query, as rewrites
/// erase values.
class LastDimInference {
public:
  explicit LastDimInference(SymbolTableCollection &symbolTables)
      : symbolTables(symbolTables) {}

  std::optional<int64_t> infer(Value value) {
    auto [it, inserted] = cache.try_emplace(value, std::nullopt);
    if (!inserted)
      return it->second;
    std::optional<int64_t> size = compute(value);
    cache[value] = size;
    return size;
  }

private:
  std::optional<int64_t> compute(Value value) {
    if (auto type = dyn_cast<TorchTensorType>(value.getType()))
      if (type.getHasRank() && type.getRank() >= 1 &&
          type.getSizes().back() != TorchTensorType::kUnknownSize)
        return type.getSizes().back();
    Operation *def = value.getDefiningOp();
    if (!def)
      return std::nullopt;
    if (std::optional<Projection> projection = matchProjection(value)) {
      ArrayRef<int64_t> weight =
          getDeclaredSizes(projection->weight, symbolTables);
      return fromSizes(weight, 2, projection->getOutFeaturesDim());
    }
    if (auto norm = dyn_cast<LayerNormOp>(def)) {
      ArrayRef<int64_t> shape = norm.getNormalizedShape();
      return shape.empty() ? std::nullopt : std::optional(shape.back());
    }
    if (auto generic = dyn_cast<GenericOp>(def)) {
      if (generic.isKind(AtenKind::embedding) && def->getNumOperands() > 0)
        return fromSizes(getDeclaredSizes(def->getOperand(0), symbolTables), 2,
                         1);
    }
    if (preservesShape(def))
      return infer(def->getOperand(0));
    // A tensor result: aten::add of lists or ints is the same kind.
    if (hasAtenTrait(def, AtenTrait::ElementwiseBinary) &&
        isa<TorchTensorType>(value.getType())) {
      // Broadcasting: a size other than 1 is the result's; all 1 is 1.
      bool allOne = true;
      for (Value operand : def->getOperands()) {
        if (!isa<TorchTensorType>(operand.getType()))
          continue;
        std::optional<int64_t> size = infer(operand);
        if (size && *size != 1)
          return size;
        allOne &= size.has_value();
      }
      return allOne ? std::optional<int64_t>(1) : std::nullopt;
    }
    return std::nullopt;
  }

  static std::optional<int64_t> fromSizes(ArrayRef<int64_t> sizes, size_t rank,
                                          size_t dim) {
    if (sizes.size() != rank || sizes[dim] == TorchTensorType::kUnknownSize)
      return std::nullopt;
    return sizes[dim];
  }

  SymbolTableCollection &symbolTables;
  llvm::DenseMap<Value, std::optional<int64_t>> cache;
};

/// Whether something reads `input` after `op` wrote it in place.
bool isReadAfter(Value input, Operation *op) {
  Block *block = op->getBlock();
  return llvm::any_of(input.getUsers(), [&](Operation *user) {
    if (user == op)
      return false;
    Operation *ancestor = block->findAncestorOpInBlock(*user);
    return !ancestor || !ancestor->isBeforeInBlock(op);
  });
}

/// p as the shortest text that reads back as the same double ("0.1").
std::string formatRate(double p) {
  char text[32];
  for (int precision = 1;; ++precision) {
    std::snprintf(text, sizeof(text), "%.*g", precision, p);
    if (precision == 17 || std::strtod(text, nullptr) == p)
      return text;
  }
}

struct Options {
  double p;
  int64_t sigma;
  int64_t tau;
  int64_t period;
};

/// A dropout becomes a gyro_dropout over per-module buffers.
struct ReplaceDropout : RewritePattern {
  ReplaceDropout(MLIRContext *ctx, Options options,
                 SymbolTableCollection &symbolTables, SiteReport &report)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx),
        options(options), symbolTables(symbolTables), report(report) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    std::optional<DropoutSite> site = matchDropout(op);
    if (!site)
      return failure();
    auto skip = [&](StringRef reason) {
      report.skip(op, reason);
      return failure();
    };
    auto inputType = dyn_cast<TorchTensorType>(site->input.getType());
    if (!inputType)
      return skip("input is not a tensor");
    if (inputType.getHasRank() && inputType.getRank() < 2)
      return skip("input has no feature dimension beside the batch");
    std::optional<int64_t> features =
        site->featureDim == 1
            ? inferChannels(site->input, symbolTables)
            : LastDimInference(symbolTables).infer(site->input);
    if (!features || *features < 1)
      return skip("feature dimension unknown");
    if (site->inplace && isReadAfter(site->input, op))
      return skip("in-place dropout whose input is read afterwards");

    MLIRContext *ctx = getContext();
    Location loc = op->getLoc();
    ModuleOp module = op->getParentOfType<ModuleOp>();
    SymbolTable &moduleSymbols = symbolTables.getSymbolTable(module);
    rewriter.setInsertionPoint(op);
    std::string owner = getModulePath(op);
    // A traced model's flag is the constant it was traced with; the module
    // trains as its own flag says, as Composer's layer reads self.training.
    Value training = site->train;
    if (training.getDefiningOp<ConstantOp>())
      training = rewriter.create<GetAttrOp>(loc, BoolType::get(ctx),
                                            joinStatePath(owner, "training"));

    auto i64 = rewriter.getI64Type();
    auto zeros = [&](ArrayRef<int64_t> shape) {
      return DenseElementsAttr::get(RankedTensorType::get(shape, i64),
                                    int64_t(0));
    };
    auto buffer = [&](StringRef name, ArrayRef<int64_t> shape, Type dtype,
                      Attribute init) {
      return createState<BufferOp>(
          rewriter, moduleSymbols, joinStatePath(owner, name),
          TorchTensorType::get(ctx, true, shape, dtype), init, loc);
    };
    Value masks = buffer("preselect_masks", {options.sigma, *features},
                         rewriter.getF32Type(),
                         rewriter.getStringAttr(makeInitializer(
                             kDropoutMaskInit, formatRate(options.p))));
    Value selected =
        buffer("selected_indices", {options.tau}, i64, zeros({options.tau}));
    Value step = buffer("training_step", {}, i64, zeros({}));
    // One period for the model, whichever options a later run passes.
    auto periodType = TorchTensorType::get(ctx, true, {}, i64);
    Value period;
    if (isa_and_nonnull<BufferOp>(
            moduleSymbols.lookup(kGyroDropoutPeriodBuffer)))
      period = rewriter.create<GetParamOp>(
          loc, periodType,
          FlatSymbolRefAttr::get(ctx, kGyroDropoutPeriodBuffer));
    else
      period = createState<BufferOp>(
          rewriter, moduleSymbols, kGyroDropoutPeriodBuffer, periodType,
          DenseElementsAttr::get(RankedTensorType::get({}, i64),
                                 options.period),
          loc);

    Value result = rewriter.create<GyroDropoutOp>(
        loc, op->getResult(0).getType(), site->input, training, masks, selected,
        step, period, rewriter.getF64FloatAttr(options.p),
        rewriter.getI64IntegerAttr(options.sigma),
        rewriter.getI64IntegerAttr(options.tau),
        rewriter.getI64IntegerAttr(site->featureDim));
    rewriter.replaceOp(op, result);
    report.match(result.getDefiningOp());
    return success();
  }

  Options options;
  SymbolTableCollection &symbolTables;
  SiteReport &report;
};

struct GyroDropoutPass
    : public composer::impl::GyroDropoutBase<GyroDropoutPass> {
  using GyroDropoutBase::GyroDropoutBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto fail = [&]() {
      signalPassFailure();
      return module.emitError("composer-gyro-dropout: ");
    };
    if (!(p >= 0.0 && p < 1.0)) {
      fail() << "p must be in [0, 1), got " << static_cast<double>(p);
      return;
    }
    if (sigma < 1 || tau < 1) {
      fail() << "sigma and tau must be >= 1, got "
             << static_cast<int64_t>(sigma) << " and "
             << static_cast<int64_t>(tau);
      return;
    }
    if (period < 0) {
      fail() << "period must be >= 0 (0: one epoch), got "
             << static_cast<int64_t>(period);
      return;
    }
    func::FuncOp forward = lookupForward(module, getArgument());
    if (!forward)
      return signalPassFailure();
    SymbolTableCollection symbolTables;
    SiteReport report(module, getArgument());
    RewritePatternSet patterns(&getContext());
    patterns.add<ReplaceDropout>(&getContext(), Options{p, sigma, tau, period},
                                 symbolTables, report);
    applyPatternsOnce(forward, std::move(patterns));
    report.emit("dropouts made gyro");
  }
};

//===----------------------------------------------------------------------===//
// Lowering
//===----------------------------------------------------------------------===//

/// gyro_dropout as aten. When training:
///   if bool(step % period.clamp_min(1) == 0):
///       selected.copy_(torch.randint(sigma, [tau], device=selected.device))
///   step.add_(1)
///   rows = torch.arange(B) * min(tau, B) // B
///   mask = masks.index_select(0, selected.index_select(0, rows))
///   mask = mask.view([B] + [1] * (x.dim() - 2) + [-1])  # feature_dim -1
///          mask.view([B, -1] + [1] * (x.dim() - 2))     # feature_dim 1
///   x * mask.type_as(x).expand_as(x) * (1 / (1 - p))
/// otherwise x. expand_as makes an input of rank < 2 an error.
struct GyroDropoutToAten : OpConversionPattern<GyroDropoutOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(GyroDropoutOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    MLIRContext *ctx = op.getContext();
    Location loc = op.getLoc();
    AtenBuilder aten(rewriter, loc);
    auto tensorType = TorchTensorType::get(ctx);
    auto intType = IntType::get(ctx);
    auto intListType = ListType::get(ctx, intType);
    auto boolType = BoolType::get(ctx);
    constexpr int64_t kLong = 4; // torch_upstream::ScalarType::Long
    Value x = adaptor.getInput();
    Value masks = adaptor.getMasks();
    Value selected = adaptor.getSelected();
    Value step = adaptor.getStep();

    auto reselect = [&] {
      Value period =
          aten.node(AtenKind::clamp_min, {adaptor.getPeriod(), aten.integer(1)},
                    tensorType);
      Value phase = aten.node(AtenKind::remainder, {step, period}, tensorType);
      Value due = aten.node(
          AtenKind::Bool,
          {aten.node(AtenKind::eq, {phase, aten.integer(0)}, tensorType)},
          boolType);
      auto ifOp = rewriter.create<IfOp>(loc, TypeRange{}, due);
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.createBlock(&ifOp.getThenRegion());
      Value drawn = aten.node(
          AtenKind::randint,
          {aten.integer(op.getSigma()), aten.intList({int64_t(op.getTau())}),
           aten.integer(kLong), aten.none(),
           aten.node("prim::device", {selected}, DeviceType::get(ctx)),
           aten.none()},
          tensorType);
      aten.node(AtenKind::copy_, {selected, drawn, aten.boolean(false)},
                tensorType);
      rewriter.create<YieldOp>(loc, ValueRange{});
      rewriter.createBlock(&ifOp.getElseRegion());
      rewriter.create<YieldOp>(loc, ValueRange{});
    };

    auto gyro = [&]() -> Value {
      reselect();
      aten.node(AtenKind::add_, {step, aten.integer(1), aten.integer(1)},
                tensorType);
      Value batch = aten.node(AtenKind::size, {x, aten.integer(0)}, intType);
      Value active =
          aten.node("prim::min", {aten.integer(op.getTau()), batch}, intType);
      Value rows = aten.node(
          AtenKind::arange,
          {batch, aten.integer(kLong), aten.none(),
           aten.node("prim::device", {selected}, DeviceType::get(ctx)),
           aten.none()},
          tensorType);
      rows = aten.node(
          AtenKind::floor_divide,
          {aten.node(AtenKind::mul, {rows, active}, tensorType), batch},
          tensorType);
      Value indices = aten.node(AtenKind::index_select,
                                {selected, aten.integer(0), rows}, tensorType);
      Value mask = aten.node(AtenKind::index_select,
                             {masks, aten.integer(0), indices}, tensorType);
      // [1] * (x.dim() - 2): the dimensions the mask broadcasts over.
      Value rank = aten.node(AtenKind::dim, {x}, intType);
      Value ones = aten.node(
          AtenKind::mul,
          {aten.node("prim::ListConstruct", {aten.integer(1)}, intListType),
           aten.node(AtenKind::sub, {rank, aten.integer(2)}, intType)},
          intListType);
      Value shape;
      if (op.getFeatureDim() == 1) {
        Value head = aten.node("prim::ListConstruct", {batch, aten.integer(-1)},
                               intListType);
        shape = aten.node(AtenKind::add, {head, ones}, intListType);
      } else {
        Value head = aten.node("prim::ListConstruct", {batch}, intListType);
        Value tail =
            aten.node("prim::ListConstruct", {aten.integer(-1)}, intListType);
        shape = aten.node(
            AtenKind::add,
            {head, aten.node(AtenKind::add, {ones, tail}, intListType)},
            intListType);
      }
      mask = aten.node(AtenKind::view, {mask, shape}, tensorType);
      mask = aten.node(AtenKind::type_as, {mask, x}, tensorType);
      mask = aten.node(AtenKind::expand_as, {mask, x}, tensorType);
      Value dropped = aten.node(AtenKind::mul, {x, mask}, tensorType);
      double scale = 1.0 / (1.0 - op.getP().convertToDouble());
      return aten.node(AtenKind::mul, {dropped, aten.floating(scale)},
                       tensorType);
    };
    auto identity = [&] { return x; };
    rewriter.replaceOp(
        op, aten.ifElse(adaptor.getTraining(), tensorType, gyro, identity)
                ->getResults());
    return success();
  }
};

} // namespace

static void populateGyroDropoutToAtenPatterns(RewritePatternSet &patterns) {
  patterns.add<GyroDropoutToAten>(patterns.getContext());
}

// No runtime kernel: the aten composition is two index_selects and a
// multiply.
static void populateGyroDropoutToRuntimePatterns(RewritePatternSet &patterns) {
  populateGyroDropoutToAtenPatterns(patterns);
}

static MethodLoweringRegistration
    gyroDropoutLowering({"gyro-dropout", populateGyroDropoutToAtenPatterns,
                         populateGyroDropoutToRuntimePatterns});
