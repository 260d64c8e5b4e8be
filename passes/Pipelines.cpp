//===- Pipelines.cpp - named method pipelines -----------------------------===//
//
// Recipes users call by name, like mlir-opt's registered pipelines:
//   composer-opt model.pt --composer-mild -o fast.pt
//   composer-opt model.pt --composer-medium=device=cpu -o fast.pt
//
//===----------------------------------------------------------------------===//

#include "composer/Passes/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace composer;

namespace {

enum class TrainingDevice { Cuda, Cpu };

struct PipelineOptions : public PassPipelineOptions<PipelineOptions> {
  Option<TrainingDevice> device{
      *this, "device",
      llvm::cl::desc("Where the model trains: the recipe leaves out the "
                     "methods that cancel another's gain there"),
      llvm::cl::init(TrainingDevice::Cuda),
      llvm::cl::values(
          clEnumValN(TrainingDevice::Cuda, "cuda",
                     "Composer's recipe as published (tensor-core GPUs)"),
          clEnumValN(TrainingDevice::Cpu, "cpu",
                     "no channels-last beside mixed precision: LibTorch's "
                     "CPU bf16 convolutions lose in NHWC what bf16 gains"))};
};

} // namespace

/// Each recipe is the one before it plus its own methods; mixed precision
/// stays last, so that it gives the methods' ops their autocast dtype.
static void addMildPasses(OpPassManager &pm, bool channelsLast = true) {
  pm.addPass(createBlurPool());
  if (channelsLast)
    pm.addPass(createChannelsLast());
}

/// The mild methods, then `addMethods`, then mixed precision.
static void addMixedPrecisionRecipe(
    OpPassManager &pm, const PipelineOptions &options,
    llvm::function_ref<void(OpPassManager &)> addMethods = {}) {
  addMildPasses(pm, options.device == TrainingDevice::Cuda);
  if (addMethods)
    addMethods(pm);
  pm.addPass(createMixedPrecision());
}

static void addHotMethods(OpPassManager &pm) {
  StochasticDepthOptions stochasticDepth;
  stochasticDepth.stochasticMethod = "sample";
  stochasticDepth.dropRate = 0.1;
  stochasticDepth.dropDistribution = "linear";
  pm.addPass(createStochasticDepth(stochasticDepth));
}

void composer::registerComposerPipelines() {
  PassPipelineRegistration<PipelineOptions>(
      "composer-mild",
      "Composer's mild recipe, graph part: BlurPool and channels-last",
      [](OpPassManager &pm, const PipelineOptions &) { addMildPasses(pm); });
  PassPipelineRegistration<PipelineOptions>(
      "composer-medium",
      "Composer's medium recipe, graph part, with its bf16 precision: "
      "BlurPool, channels-last (not on cpu) and mixed precision",
      [](OpPassManager &pm, const PipelineOptions &options) {
        addMixedPrecisionRecipe(pm, options);
      });
  PassPipelineRegistration<PipelineOptions>(
      "composer-hot",
      "Composer's hot recipe, graph part: the medium one with stochastic "
      "depth (sample mode, drop rate 0.1, linear)",
      [](OpPassManager &pm, const PipelineOptions &options) {
        addMixedPrecisionRecipe(pm, options, addHotMethods);
      });
}
