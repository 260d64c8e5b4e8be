//===- Pipelines.cpp - named method pipelines -----------------------------===//
//
// Recipes users call by name, like mlir-opt's registered pipelines:
//   composer-opt model.pt --composer-mild -o fast.pt
//
//===----------------------------------------------------------------------===//

#include "composer/Passes/PassCatalog.h"
#include "composer/Passes/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace composer;

/// Each recipe is the one before it plus its own methods; mixed precision
/// stays last, so that it gives the methods' ops their autocast dtype.
static void addMildPasses(OpPassManager &pm) {
  pm.addPass(createBlurPool());
  pm.addPass(createChannelsLast());
}

static void addHotMethods(OpPassManager &pm) {
  StochasticDepthOptions stochasticDepth;
  stochasticDepth.stochasticMethod = "sample";
  stochasticDepth.dropRate = 0.1;
  stochasticDepth.dropDistribution = "linear";
  pm.addPass(createStochasticDepth(stochasticDepth));
}

static void addMediumPasses(OpPassManager &pm) {
  addMildPasses(pm);
  pm.addPass(createMixedPrecision());
}

static void addHotPasses(OpPassManager &pm) {
  addMildPasses(pm);
  addHotMethods(pm);
  pm.addPass(createMixedPrecision());
}

static constexpr PipelineDescription kPipelines[] = {
    {"composer-mild",
     "Composer's mild recipe, graph part: BlurPool and channels-last",
     addMildPasses},
    {"composer-medium",
     "Composer's medium recipe, graph part, with its bf16 precision: "
     "BlurPool, channels-last and mixed precision",
     addMediumPasses},
    {"composer-hot",
     "Composer's hot recipe, graph part: the medium one with stochastic "
     "depth (sample mode, drop rate 0.1, linear)",
     addHotPasses},
};

llvm::ArrayRef<PipelineDescription> composer::getComposerPipelines() {
  return kPipelines;
}

void composer::registerComposerPipelines() {
  for (const PipelineDescription &pipeline : kPipelines)
    PassPipelineRegistration<>(pipeline.name, pipeline.summary,
                               pipeline.addPasses);
}
