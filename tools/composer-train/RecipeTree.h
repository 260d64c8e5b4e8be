//===- RecipeTree.h - A recipe as an editable YAML tree ---------*- C++ -*-===//
//
// The recipe is parsed with LLVM's YAML parser into a small tree that keeps
// every value's location, so command-line overrides can replace parts of it
// and a later diagnostic about a value points at the file, line and column
// (or the override) it came from.
//
//===----------------------------------------------------------------------===//
#ifndef COMPOSER_TRAIN_RECIPETREE_H
#define COMPOSER_TRAIN_RECIPETREE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace composer::train {

/// One YAML value: null, a scalar (kept as text), a mapping or a sequence.
struct RecipeValue {
  enum class Kind { Null, Scalar, Mapping, Sequence } kind = Kind::Null;
  std::string scalar;
  llvm::SMLoc loc;
  struct Entry;
  std::vector<Entry> entries;
  std::vector<RecipeValue> items;
  /// Keys a reader asked this mapping for, for unknown-key messages.
  mutable std::vector<std::string> asked;

  bool isNull() const { return kind == Kind::Null; }
  Entry *find(llvm::StringRef key);
};

/// A key of a mapping and its value.
struct RecipeValue::Entry {
  std::string key;
  llvm::SMLoc keyLoc;
  RecipeValue value;
  /// Set once a reader has read it; an entry never read is an unknown key.
  mutable bool used = false;
};

/// Reads `recipePath` (none if empty) into `root`, a mapping, and applies
/// `overrides` (`dotted.key=value`, the value in YAML). Diagnostics go to
/// `errors` through `sourceMgr`, which holds the buffers the tree's locations
/// point into; returns false after one.
bool readRecipeTree(llvm::SourceMgr &sourceMgr, const std::string &recipePath,
                    const std::vector<std::string> &overrides,
                    llvm::raw_ostream &errors, RecipeValue &root);

/// As above, with the recipe's text in `recipe` (none if null); its
/// buffer identifier names it in diagnostics.
bool readRecipeTree(llvm::SourceMgr &sourceMgr,
                    std::unique_ptr<llvm::MemoryBuffer> recipe,
                    const std::vector<std::string> &overrides,
                    llvm::raw_ostream &errors, RecipeValue &root);

/// The scalars under `root` by dotted key ("optimizer.lr" -> "0.1"), lists
/// as their YAML flow text: the run's hyperparameters as loggers record
/// them.
std::map<std::string, std::string> flattenRecipeTree(const RecipeValue &root);

/// Writes `root` back as YAML (--print-recipe).
void printRecipeTree(const RecipeValue &root, llvm::raw_ostream &out);

} // namespace composer::train

#endif // COMPOSER_TRAIN_RECIPETREE_H
