//===- Recipe.h - composer-train recipes (YAML) -----------------*- C++ -*-===//
//
// A recipe is a YAML file shaped like a Composer YAML: model, data, loss,
// optimizer, scheduler, duration, algorithms, precision, device, seed,
// checkpointing and logging. Every value can be overridden from the command
// line as `dotted.key=value` (the value is YAML: `betas=[0.9,0.95]`).
// Unknown keys and bad values are reported at their line and column.
//
//===----------------------------------------------------------------------===//
#ifndef COMPOSER_TRAIN_RECIPE_H
#define COMPOSER_TRAIN_RECIPE_H

#include "composer/Runtime/Trainer.h"

#include "llvm/Support/raw_ostream.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace composer::train {

/// Reads `recipePath` (may be empty: overrides only), applies `overrides`,
/// loads the model and the data, and builds a trainer configuration.
/// Diagnostics go to `errors`; returns nullopt after any.
/// With `env` distributed, the data is sharded for its rank and only rank 0
/// gets loggers and the progress bar.
std::optional<runtime::TrainerConfig>
loadRecipe(const std::string &recipePath,
           const std::vector<std::string> &overrides, llvm::raw_ostream &errors,
           const runtime::DistributedEnv &env = {});

/// What an in-process caller (composer_opt.Trainer) brings in place of the
/// recipe's `model` and of its data sections of `type: supplied`.
struct SuppliedInputs {
  torch::jit::Module model;
  /// By data section: "train_data", "eval_data", or an evaluator's label.
  std::map<std::string, std::shared_ptr<runtime::BatchLoader>> loaders;
};

/// As loadRecipe, from the recipe's text (`name` names it in diagnostics),
/// with the model and the supplied data sections taken from `supplied`.
std::optional<runtime::TrainerConfig>
loadRecipeText(const std::string &text, const std::string &name,
               const SuppliedInputs &supplied, llvm::raw_ostream &errors,
               const runtime::DistributedEnv &env = {});

/// The recipe with the overrides applied, as YAML, without loading anything.
std::optional<std::string>
resolveRecipe(const std::string &recipePath,
              const std::vector<std::string> &overrides,
              llvm::raw_ostream &errors);

} // namespace composer::train

#endif // COMPOSER_TRAIN_RECIPE_H
