//===- MethodLowering.cpp - the lowerings' registry and drivers -----------===//
//
// The two lowering passes know no method: composer-lower-to-aten expands
// every method op into the aten ops that compute it (the exported model
// needs nothing beyond stock PyTorch), composer-lower-to-runtime rewrites it
// into one call of its operator in the runtime library
// (docs/runtime-ops.md); each is a dialect conversion with the patterns the
// methods register. Runtime patterns that fold a neighbour into the call (a
// fusion) carry, as debug label, what the report counts them as ("max pools
// fused").
//
//===----------------------------------------------------------------------===//

#include "MethodLowering.h"
#include "PassUtils.h"
#include "Report.h"
#include "composer/Passes/Passes.h"

namespace composer {
#define GEN_PASS_DEF_LOWERTOATEN
#define GEN_PASS_DEF_LOWERTORUNTIME
#include "composer/Passes/Passes.h.inc"
} // namespace composer

using namespace mlir;
using namespace composer;

/// Constructed on first use, so that registrations from other files' static
/// initializers find it whatever their order.
static std::vector<MethodLowering> &getRegistry() {
  static std::vector<MethodLowering> registry;
  return registry;
}

MethodLoweringRegistration::MethodLoweringRegistration(
    MethodLowering lowering) {
  std::vector<MethodLowering> &registry = getRegistry();
  auto byName = [](const MethodLowering &lhs, const MethodLowering &rhs) {
    return lhs.name < rhs.name;
  };
  registry.insert(llvm::upper_bound(registry, lowering, byName), lowering);
}

ArrayRef<MethodLowering> composer::getMethodLowerings() {
  return getRegistry();
}

namespace {

/// How often each debug label's patterns applied, in pattern order.
using LabelCounts = SmallVector<std::pair<StringRef, unsigned>>;

/// Counts the patterns that applied (each lowers one method op) and, per
/// debug label, those carrying it; remembers which values replaced the
/// results of the method ops in `refinedTypes`.
class LoweringListener : public RewriterBase::Listener {
public:
  using RefinedTypes = DenseMap<Operation *, SmallVector<TorchTensorType>>;

  LoweringListener(unsigned &lowered, LabelCounts &byLabel,
                   const RefinedTypes &refinedTypes)
      : lowered(lowered), byLabel(byLabel), refinedTypes(refinedTypes) {}

  void notifyPatternEnd(const Pattern &pattern, LogicalResult status) override {
    if (failed(status))
      return;
    ++lowered;
    for (StringRef label : pattern.getDebugLabels())
      for (auto &[countedLabel, count] : byLabel)
        if (countedLabel == label)
          ++count;
  }

  // Sent once the conversion is sure to succeed; `op` may only serve as a
  // key by then.
  void notifyOperationReplaced(Operation *op, ValueRange values) override {
    auto refined = refinedTypes.find(op);
    if (refined == refinedTypes.end())
      return;
    for (auto [value, type] : llvm::zip(values, refined->second))
      if (value && type)
        replacements.push_back({value, type});
  }

  /// Gives the replacing values what the replaced results' types knew, which
  /// the lowerings' untyped ops do not say.
  void restoreRefinedTypes() {
    for (auto [value, type] : replacements)
      if (auto current = dyn_cast<TorchTensorType>(value.getType()))
        if (TorchTensorType met = current.meet(type))
          value.setType(met);
  }

private:
  unsigned &lowered;
  LabelCounts &byLabel;
  const RefinedTypes &refinedTypes;
  SmallVector<std::pair<Value, TorchTensorType>> replacements;
};

} // namespace

LogicalResult
composer::lowerMethodOps(ModuleOp module, StringRef passName,
                         PopulatePatternsFn MethodLowering::*populate,
                         StringRef loweredWhat) {
  RewritePatternSet patterns(module.getContext());
  for (const MethodLowering &method : getMethodLowerings())
    (method.*populate)(patterns);
  LabelCounts byLabel;
  for (const std::unique_ptr<RewritePattern> &pattern :
       patterns.getNativePatterns())
    for (StringRef label : pattern->getDebugLabels())
      if (llvm::none_of(
              byLabel, [&](const auto &entry) { return entry.first == label; }))
        byLabel.push_back({label, 0});

  // The lowerings build untyped ops (`!composer.tensor`), and a conversion
  // that replaces a result refined by --input-spec with one of another type
  // needs a materialization this dialect has no op for. So such results are
  // relaxed first, and the values that replace them get the refined types
  // back once the conversion is done; function signatures follow.
  auto untyped = TorchTensorType::get(module.getContext());
  LoweringListener::RefinedTypes refinedTypes;
  module.walk([&](MethodOp op) {
    SmallVector<TorchTensorType> &types = refinedTypes[op];
    for (Value result : op->getResults()) {
      auto type = dyn_cast<TorchTensorType>(result.getType());
      types.push_back(type);
      if (type)
        result.setType(untyped);
    }
  });

  ConversionTarget target(*module.getContext());
  target.markUnknownOpDynamicallyLegal(
      [](Operation *op) { return !isa<MethodOp>(op); });
  unsigned lowered = 0;
  LoweringListener listener(lowered, byLabel, refinedTypes);
  ConversionConfig config;
  config.listener = &listener;
  if (failed(
          applyPartialConversion(module, target, std::move(patterns), config)))
    return failure();
  listener.restoreRefinedTypes();
  syncFunctionTypes(module);

  if (!lowered)
    return success();
  std::string matchedWhat;
  llvm::raw_string_ostream os(matchedWhat);
  os << loweredWhat;
  if (!byLabel.empty()) {
    os << " (";
    llvm::interleaveComma(byLabel, os, [&](const auto &entry) {
      os << entry.second << " " << entry.first;
    });
    os << ")";
  }
  SiteReport report(module, passName);
  report.addMatches(lowered);
  report.emit(os.str());
  return success();
}

namespace {

/// A lowering pass: the conversion with the patterns `Populate` adds for
/// every method, reporting "<N> <What>".
template <template <typename> class Base,
          PopulatePatternsFn MethodLowering::*Populate, const char *What>
struct LoweringPass : Base<LoweringPass<Base, Populate, What>> {
  void runOnOperation() override {
    if (failed(lowerMethodOps(this->getOperation(), this->getArgument(),
                              Populate, What)))
      this->signalPassFailure();
  }
};

constexpr char kLoweredToAten[] = "method ops lowered to aten";
constexpr char kLoweredToRuntime[] = "method ops lowered to runtime ops";

// Instantiated here, which also defines the passes' create functions (friends
// of their generated bases).
template struct LoweringPass<composer::impl::LowerToAtenBase,
                             &MethodLowering::populateToAtenPatterns,
                             kLoweredToAten>;
template struct LoweringPass<composer::impl::LowerToRuntimeBase,
                             &MethodLowering::populateToRuntimePatterns,
                             kLoweredToRuntime>;

} // namespace
