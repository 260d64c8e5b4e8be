//===- Pipelines.cpp - named method pipelines -----------------------------===//
//
// Recipes users call by name, like mlir-opt's registered pipelines:
//   composer-opt model.pt --composer-mild -o fast.pt
//
//===----------------------------------------------------------------------===//

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

void composer::registerComposerPipelines() {
  PassPipelineRegistration<>(
      "composer-mild",
      "Composer's mild recipe, graph part: BlurPool and channels-last",
      addMildPasses);
  PassPipelineRegistration<>(
      "composer-medium",
      "Composer's medium recipe, graph part, with its bf16 precision: "
      "BlurPool, channels-last and mixed precision",
      [](OpPassManager &pm) {
        addMildPasses(pm);
        pm.addPass(createMixedPrecision());
      });
  PassPipelineRegistration<>(
      "composer-hot",
      "Composer's hot recipe, graph part: the medium one with stochastic "
      "depth (sample mode, drop rate 0.1, linear)",
      [](OpPassManager &pm) {
        addMildPasses(pm);
        addHotMethods(pm);
        pm.addPass(createMixedPrecision());
      });
}
