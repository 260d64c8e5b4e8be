//===- RecipeReader.h - Typed values out of a recipe tree -------*- C++ -*-===//
//
// Every getter takes a mapping and a key, marks the key as asked for there
// and, when present, as read; whatever is left unread at the end is an
// unknown key, reported with the keys that would have been understood in its
// place. Bad values are reported as `file:line:col: error:` at the value and
// replaced by the caller's fallback, so one pass reports every error.
//
//===----------------------------------------------------------------------===//
#ifndef COMPOSER_TRAIN_RECIPEREADER_H
#define COMPOSER_TRAIN_RECIPEREADER_H

#include "RecipeTree.h"

#include "composer/Runtime/Algorithms.h"
#include "composer/Runtime/Time.h"

#include "llvm/ADT/Twine.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace composer::train {

class RecipeReader {
public:
  explicit RecipeReader(llvm::SourceMgr &sourceMgr);

  bool failed() const { return failed_; }
  void error(llvm::SMLoc loc, const llvm::Twine &message);

  /// The value at `key` of `map` (marking it read), or null if absent or
  /// null.
  const RecipeValue *get(const RecipeValue &map, llvm::StringRef key);
  /// As `get`, reporting a missing key (in `where`, when not the root).
  const RecipeValue *require(const RecipeValue &map, llvm::StringRef key,
                             llvm::StringRef where);
  /// A mapping (absent: an empty one).
  const RecipeValue &mapping(const RecipeValue &map, llvm::StringRef key);

  std::string string(const RecipeValue &map, llvm::StringRef key,
                     std::string fallback);
  double number(const RecipeValue &map, llvm::StringRef key, double fallback);
  int64_t integer(const RecipeValue &map, llvm::StringRef key,
                  int64_t fallback);
  bool boolean(const RecipeValue &map, llvm::StringRef key, bool fallback);
  runtime::Time time(const RecipeValue &map, llvm::StringRef key,
                     runtime::Time fallback);
  std::vector<double> numbers(const RecipeValue &map, llvm::StringRef key);
  std::vector<std::string> strings(const RecipeValue &map, llvm::StringRef key);
  std::vector<runtime::Time> times(const RecipeValue &map, llvm::StringRef key);

  /// `value`, found at `key`, as an option of `type`; nullopt after a
  /// diagnostic.
  std::optional<runtime::OptionValue> option(const RecipeValue &value,
                                             llvm::StringRef key,
                                             runtime::OptionType type);

  /// Marks everything under `value` read: a diagnostic about it already
  /// covers its keys.
  void markRead(const RecipeValue &value);

  /// Reports every key nobody read, with the ones understood there.
  void reportUnknown(const RecipeValue &root) { reportUnknown(root, ""); }

private:
  void reportUnknown(const RecipeValue &value, const std::string &path);

  template <typename Convert>
  auto list(const RecipeValue &map, llvm::StringRef key, llvm::StringRef what,
            Convert convert) -> std::vector<decltype(convert(map))>;

  /// `value` parsed by `parse` (true on failure, as StringRef's getAs*), or
  /// nullopt after a diagnostic saying what `key` must be.
  template <typename T, typename Parse>
  std::optional<T> parseScalar(const RecipeValue &value, llvm::StringRef key,
                               llvm::StringRef what, Parse parse);
  std::optional<std::string> toString(const RecipeValue &value,
                                      llvm::StringRef key);
  std::optional<double> toNumber(const RecipeValue &value, llvm::StringRef key);
  std::optional<int64_t> toInteger(const RecipeValue &value,
                                   llvm::StringRef key);
  std::optional<bool> toBoolean(const RecipeValue &value, llvm::StringRef key);
  std::optional<runtime::Time> toTime(const RecipeValue &value,
                                      llvm::StringRef key);

  llvm::SourceMgr &sourceMgr;
  /// What `mapping` returns for an absent key.
  RecipeValue emptyMapping;
  bool failed_ = false;
};

} // namespace composer::train

#endif // COMPOSER_TRAIN_RECIPEREADER_H
