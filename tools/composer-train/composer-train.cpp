//===- composer-train.cpp - Train a TorchScript model from a recipe -------===//
//
//   composer-train recipe.yaml [key=value ...] [--autoresume]
//                  [--plugin lib.so ...] [--metrics-jsonl=PATH]
//                  [--eval-only] [--export=OUT.pt]
//   composer-train --verify CKPT
//
// Exit status 0 when the run finishes, 1 on any error (bad recipe, bad data,
// a NaN loss) after a diagnostic. SIGINT (Ctrl-C) or SIGTERM stops the run
// after the batch in progress, evaluated and checkpointed as at its end;
// the exit status is then 130 (SIGINT) or 143 (SIGTERM). A second signal
// terminates at once.
//
//===----------------------------------------------------------------------===//

#include "Launcher.h"
#include "Recipe.h"

#include "composer/Runtime/Checkpoint.h"
#include "composer/Runtime/Interrupt.h"
#include "composer/Runtime/Logger.h"
#include "composer/Runtime/Options.h"
#include "composer/Runtime/ProcessSettings.h"
#include "composer/Runtime/Trainer.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <dlfcn.h>

using namespace llvm;

// --help lists these categories only, not the options of LLVM's libraries.
static cl::OptionCategory trainCategory("composer-train options");

static cl::list<std::string>
    positional(cl::Positional, cl::desc("[recipe.yaml] [key=value ...]"),
               cl::cat(trainCategory));

static cl::opt<bool>
    autoresume("autoresume",
               cl::desc("Continue from the newest checkpoint in the "
                        "recipe's save_folder (same as autoresume=true)"),
               cl::cat(trainCategory));

static cl::opt<bool>
    printRecipe("print-recipe",
                cl::desc("Print the recipe with overrides applied, then "
                         "exit"),
                cl::cat(trainCategory));

static cl::opt<bool>
    evalOnly("eval-only",
             cl::desc("Evaluate the model (after loading load_path or the "
                      "newest checkpoint) and exit"),
             cl::cat(trainCategory));

static cl::opt<std::string> exportPath(
    "export",
    cl::desc("After the run (with --eval-only: after loading load_path or "
             "the newest checkpoint), write the model for inference: "
             "TorchScript in eval mode at this path, and its state_dict "
             "beside it (model.pt: model.state_dict.pt)"),
    cl::value_desc("path.pt"), cl::cat(trainCategory));

static cl::opt<std::string> metricsJsonl(
    "metrics-jsonl",
    cl::desc("Also log the metrics as JSON lines to this file, e.g. "
             "/dev/fd/3 for a pipe to a parent process"),
    cl::value_desc("path"), cl::cat(trainCategory));

static cl::list<std::string>
    plugins("plugin",
            cl::desc("Load a shared library that registers algorithms and "
                     "callbacks (repeatable; examples/plugin)"),
            cl::value_desc("lib.so"), cl::cat(trainCategory));

static cl::opt<std::string> consolidate(
    "consolidate",
    cl::desc("Write the sharded checkpoint CKPT (the directory a sharded "
             "run saves) as one whole checkpoint at -o, then exit"),
    cl::value_desc("CKPT"), cl::cat(trainCategory));
static cl::opt<std::string>
    consolidatedPath("o", cl::desc("Where --consolidate writes"),
                     cl::value_desc("file"), cl::cat(trainCategory));
static cl::opt<std::string> verify(
    "verify",
    cl::desc("Check the checkpoint CKPT (a file, or a sharded checkpoint's "
             "directory) as a resumption reads it, the CRC-32 of every "
             "archive entry included, then exit: 0 when it verifies"),
    cl::value_desc("CKPT"), cl::cat(trainCategory));

static cl::OptionCategory
    launchCategory("Launching several processes (torchrun's contract)");
static cl::opt<int>
    nprocPerNode("nproc-per-node",
                 cl::desc("Start this many training processes on this node"),
                 cl::init(0), cl::cat(launchCategory));
static cl::opt<int> nnodes("nnodes", cl::desc("Number of nodes"), cl::init(1),
                           cl::cat(launchCategory));
static cl::opt<int> nodeRank("node-rank", cl::desc("This node's index"),
                             cl::init(0), cl::cat(launchCategory));
static cl::opt<std::string> masterAddr("master-addr",
                                       cl::desc("Address of rank 0's node"),
                                       cl::init("127.0.0.1"),
                                       cl::cat(launchCategory));
static cl::opt<int>
    masterPort("master-port",
               cl::desc("Port of the rendezvous store (default: a free one, "
                        "one node only)"),
               cl::init(0), cl::cat(launchCategory));

/// "model.state_dict.pt" beside "model.pt".
static std::string stateDictPathFor(StringRef modelPath) {
  SmallString<128> path(modelPath);
  sys::path::replace_extension(path, "");
  return (path + ".state_dict.pt").str();
}

/// --export, on rank 0; the exit status.
static int exportModel(composer::runtime::Trainer &trainer,
                       const composer::runtime::DistributedEnv &env) {
  if (exportPath.empty() || env.rank != 0)
    return 0;
  std::string stateDict = stateDictPathFor(exportPath);
  trainer.exportForInference(exportPath, stateDict);
  errs() << "composer-train: exported " << exportPath << " and " << stateDict
         << "\n";
  return 0;
}

int main(int argc, char **argv) {
  InitLLVM initLLVM(argc, argv);
  // Before any thread starts: a training process reuses the same buffers
  // every step, and must not slow down on denormals.
  composer::runtime::applyTrainingProcessSettings();
  cl::HideUnrelatedOptions({&trainCategory, &launchCategory});
  cl::ParseCommandLineOptions(
      argc, argv,
      "composer-train: trains a TorchScript model from a Composer-style "
      "recipe\n\n  composer-train recipe.yaml optimizer.lr=0.05 "
      "max_duration=2ep\n");

  if (!verify.empty()) {
    if (!positional.empty()) {
      errs() << "composer-train: error: usage: composer-train --verify CKPT\n";
      return 1;
    }
    try {
      composer::runtime::verifyCheckpoint(verify);
    } catch (const std::exception &e) {
      errs() << "composer-train: error: " << e.what() << "\n";
      return 1;
    }
    outs() << verify << ": verified\n";
    return 0;
  }

  if (!consolidate.empty() || !consolidatedPath.empty()) {
    if (consolidate.empty() || consolidatedPath.empty() ||
        !positional.empty()) {
      errs() << "composer-train: error: usage: composer-train --consolidate "
                "CKPT -o FILE\n";
      return 1;
    }
    try {
      composer::runtime::consolidateCheckpoint(consolidate, consolidatedPath);
    } catch (const std::exception &e) {
      errs() << "composer-train: error: " << e.what() << "\n";
      return 1;
    }
    return 0;
  }

  // Plugins register their components before any recipe names them; a
  // name taken twice (by the runtime or a plugin) is an error.
  auto conflicts = [](const std::string &source) {
    std::vector<std::string> taken =
        composer::runtime::takeRegistrationConflicts();
    for (const std::string &what : taken)
      errs() << "composer-train: error: " << source << " registers " << what
             << ", which is already registered\n";
    return !taken.empty();
  };
  if (conflicts("the runtime"))
    return 1;
  for (const std::string &plugin : plugins) {
    // dlopen itself, not LLVM's DynamicLibrary, which closes its libraries
    // at exit while the runtime's registries still hold the plugin's
    // functions; RTLD_NODELETE keeps the code mapped until the end.
    if (!dlopen(plugin.c_str(), RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE)) {
      errs() << "composer-train: error: cannot load plugin '" << plugin
             << "': " << dlerror() << "\n";
      return 1;
    }
    if (conflicts("plugin '" + plugin + "'"))
      return 1;
  }

  // The launcher starts copies of this command line; they find RANK set.
  if ((nprocPerNode > 0 || nnodes > 1) && !getenv("RANK")) {
    composer::train::LaunchOptions launch;
    launch.nprocPerNode = std::max(1, int(nprocPerNode));
    launch.nnodes = nnodes;
    launch.nodeRank = nodeRank;
    launch.masterAddr = masterAddr;
    launch.masterPort = masterPort;
    return composer::train::launch(launch, argv);
  }

  std::string recipe;
  std::vector<std::string> overrides;
  for (const std::string &argument : positional) {
    if (argument.find('=') == std::string::npos && recipe.empty() &&
        overrides.empty())
      recipe = argument;
    else
      overrides.push_back(argument);
  }
  if (autoresume)
    overrides.push_back("autoresume=true");

  if (printRecipe) {
    auto resolved = composer::train::resolveRecipe(recipe, overrides, errs());
    if (!resolved)
      return 1;
    outs() << *resolved;
    return 0;
  }
  composer::runtime::DistributedEnv env;
  try {
    env = composer::runtime::DistributedEnv::fromEnvironment();
  } catch (const std::invalid_argument &e) {
    errs() << "composer-train: error: " << e.what() << "\n";
    return 1;
  }
  auto config = composer::train::loadRecipe(recipe, overrides, errs(), env);
  if (!config)
    return 1;
  // One process speaks for the group, as with the recipe's loggers.
  if (!metricsJsonl.empty() && env.rank == 0) {
    try {
      config->logger.addDestination(
          composer::runtime::createJsonlLogger(metricsJsonl));
    } catch (const std::exception &e) {
      errs() << "composer-train: error: --metrics-jsonl: " << e.what() << "\n";
      return 1;
    }
  }
  // From here on, the first SIGINT or SIGTERM stops training after a batch
  // (the ranks agree on which), the second terminates the process.
  if (!evalOnly)
    composer::runtime::installInterruptHandlers();
  try {
    if (env.distributed())
      config->communicator = composer::runtime::createCommunicator(
          env, config->device, config->distributedTimeout);
    composer::runtime::Trainer trainer(std::move(*config));
    if (evalOnly) {
      composer::runtime::EvalResult result = trainer.evaluate();
      if (env.rank == 0)
        outs() << formatv("eval accuracy {0:F4} loss {1:F4} on {2} samples\n",
                          result.accuracy, result.loss, result.samples);
      return exportModel(trainer, env);
    }
    trainer.fit();
    if (trainer.resumedFrom() && env.rank == 0)
      errs() << "composer-train: resumed from " << *trainer.resumedFrom()
             << "\n";
    // A signal during the run's end (evaluation, checkpoint) counts too.
    int stopSignal = trainer.interruptedBy();
    if (!stopSignal)
      stopSignal = composer::runtime::interruptSignal();
    if (stopSignal) {
      const composer::runtime::Timestamp &now = trainer.state().timestamp;
      if (env.rank == 0) {
        errs() << "composer-train: interrupted by "
               << composer::runtime::signalName(stopSignal)
               << ": stopped at epoch " << now.epoch << ", batch " << now.batch;
        if (trainer.lastCheckpoint())
          errs() << "; checkpoint " << *trainer.lastCheckpoint()
                 << " (continue with --autoresume)\n";
        else
          errs() << "; no checkpoint written (no save_folder)\n";
      }
      return composer::runtime::interruptExitStatus(stopSignal);
    }
    return exportModel(trainer, env);
  } catch (const std::exception &e) {
    errs() << "composer-train: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
