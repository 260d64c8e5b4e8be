//===- MethodLowering.cpp - methods register their lowerings --------------===//

#include "MethodLowering.h"
#include "Report.h"

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
/// debug label, those carrying it.
class CountingListener : public RewriterBase::Listener {
public:
  CountingListener(unsigned &lowered, LabelCounts &byLabel)
      : lowered(lowered), byLabel(byLabel) {}

  void notifyPatternEnd(const Pattern &pattern, LogicalResult status) override {
    if (failed(status))
      return;
    ++lowered;
    for (StringRef label : pattern.getDebugLabels())
      for (auto &[countedLabel, count] : byLabel)
        if (countedLabel == label)
          ++count;
  }

private:
  unsigned &lowered;
  LabelCounts &byLabel;
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

  ConversionTarget target(*module.getContext());
  target.markUnknownOpDynamicallyLegal(
      [](Operation *op) { return !isa<MethodOp>(op); });
  unsigned lowered = 0;
  CountingListener listener(lowered, byLabel);
  ConversionConfig config;
  config.listener = &listener;
  if (failed(
          applyPartialConversion(module, target, std::move(patterns), config)))
    return failure();

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
