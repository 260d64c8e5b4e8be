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

void composer::registerComposerPipelines() {
  PassPipelineRegistration<>(
      "composer-mild",
      "Composer's mild recipe, graph part: BlurPool and channels-last",
      [](OpPassManager &pm) {
        pm.addPass(createBlurPool());
        pm.addPass(createChannelsLast());
      });
  PassPipelineRegistration<>(
      "composer-medium",
      "Composer's medium recipe, graph part, with its bf16 precision: "
      "BlurPool, channels-last and mixed precision",
      [](OpPassManager &pm) {
        pm.addPass(createBlurPool());
        pm.addPass(createChannelsLast());
        pm.addPass(createMixedPrecision());
      });
  PassPipelineRegistration<>(
      "composer-hot",
      "Composer's hot recipe, graph part: the medium one with stochastic "
      "depth (sample mode, drop rate 0.1, linear)",
      [](OpPassManager &pm) {
        pm.addPass(createBlurPool());
        pm.addPass(createChannelsLast());
        StochasticDepthOptions stochasticDepth;
        stochasticDepth.stochasticMethod = "sample";
        stochasticDepth.dropRate = 0.1;
        stochasticDepth.dropDistribution = "linear";
        pm.addPass(createStochasticDepth(stochasticDepth));
        pm.addPass(createMixedPrecision());
      });
}
