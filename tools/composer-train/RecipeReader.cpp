//===- RecipeReader.cpp - Typed values out of a recipe tree ---------------===//

#include "RecipeReader.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <stdexcept>

using namespace composer::runtime;
using llvm::SMLoc;
using llvm::StringRef;
using llvm::Twine;

namespace composer::train {

RecipeReader::RecipeReader(llvm::SourceMgr &sourceMgr) : sourceMgr(sourceMgr) {
  emptyMapping.kind = RecipeValue::Kind::Mapping;
}

void RecipeReader::error(SMLoc loc, const Twine &message) {
  sourceMgr.PrintMessage(loc, llvm::SourceMgr::DK_Error, message);
  failed_ = true;
}

const RecipeValue *RecipeReader::get(const RecipeValue &map, StringRef key) {
  map.asked.push_back(key.str());
  if (map.kind != RecipeValue::Kind::Mapping)
    return nullptr;
  auto *entry = const_cast<RecipeValue &>(map).find(key);
  if (!entry)
    return nullptr;
  entry->used = true;
  return entry->value.isNull() ? nullptr : &entry->value;
}

const RecipeValue *RecipeReader::require(const RecipeValue &map, StringRef key,
                                         StringRef where) {
  const RecipeValue *value = get(map, key);
  if (!value)
    error(map.loc, "missing required key '" + key + "'" +
                       (where.empty() ? "" : " in '" + where + "'"));
  return value;
}

const RecipeValue &RecipeReader::mapping(const RecipeValue &map,
                                         StringRef key) {
  const RecipeValue *value = get(map, key);
  if (!value)
    return emptyMapping;
  if (value->kind != RecipeValue::Kind::Mapping) {
    error(value->loc, "'" + key + "' must be a mapping");
    return emptyMapping;
  }
  return *value;
}

std::string RecipeReader::string(const RecipeValue &map, StringRef key,
                                 std::string fallback) {
  const RecipeValue *value = get(map, key);
  if (!value)
    return fallback;
  return toString(*value, key).value_or(std::move(fallback));
}

double RecipeReader::number(const RecipeValue &map, StringRef key,
                            double fallback) {
  const RecipeValue *value = get(map, key);
  return value ? toNumber(*value, key).value_or(fallback) : fallback;
}

int64_t RecipeReader::integer(const RecipeValue &map, StringRef key,
                              int64_t fallback) {
  const RecipeValue *value = get(map, key);
  return value ? toInteger(*value, key).value_or(fallback) : fallback;
}

bool RecipeReader::boolean(const RecipeValue &map, StringRef key,
                           bool fallback) {
  const RecipeValue *value = get(map, key);
  return value ? toBoolean(*value, key).value_or(fallback) : fallback;
}

Time RecipeReader::time(const RecipeValue &map, StringRef key, Time fallback) {
  const RecipeValue *value = get(map, key);
  return value ? toTime(*value, key).value_or(fallback) : fallback;
}

template <typename Convert>
auto RecipeReader::list(const RecipeValue &map, StringRef key, StringRef what,
                        Convert convert)
    -> std::vector<decltype(convert(map))> {
  std::vector<decltype(convert(map))> result;
  const RecipeValue *value = get(map, key);
  if (!value)
    return result;
  if (value->kind != RecipeValue::Kind::Sequence) {
    error(value->loc, "'" + key + "' must be a list of " + what);
    return result;
  }
  for (const RecipeValue &item : value->items)
    result.push_back(convert(item));
  return result;
}

std::vector<double> RecipeReader::numbers(const RecipeValue &map,
                                          StringRef key) {
  return list(map, key, "numbers", [&](const RecipeValue &item) {
    return toNumber(item, key).value_or(0);
  });
}

std::vector<std::string> RecipeReader::strings(const RecipeValue &map,
                                               StringRef key) {
  return list(map, key, "strings", [&](const RecipeValue &item) {
    return toString(item, key).value_or("");
  });
}

std::vector<Time> RecipeReader::times(const RecipeValue &map, StringRef key) {
  return list(map, key, "times", [&](const RecipeValue &item) {
    return toTime(item, key).value_or(Time());
  });
}

std::optional<OptionValue>
RecipeReader::option(const RecipeValue &value, StringRef key, OptionType type) {
  auto widen = [](auto typed) -> std::optional<OptionValue> {
    if (!typed)
      return std::nullopt;
    return OptionValue(*typed);
  };
  switch (type) {
  case OptionType::Number:
    return widen(toNumber(value, key));
  case OptionType::Integer:
    return widen(toInteger(value, key));
  case OptionType::Boolean:
    return widen(toBoolean(value, key));
  case OptionType::String:
    return widen(toString(value, key));
  case OptionType::Time:
    return widen(toTime(value, key));
  }
  return std::nullopt;
}

void RecipeReader::markRead(const RecipeValue &value) {
  for (const RecipeValue::Entry &entry : value.entries) {
    entry.used = true;
    markRead(entry.value);
  }
  for (const RecipeValue &item : value.items)
    markRead(item);
}

void RecipeReader::reportUnknown(const RecipeValue &value,
                                 const std::string &path) {
  if (value.kind == RecipeValue::Kind::Sequence)
    for (const RecipeValue &item : value.items)
      reportUnknown(item, path);
  if (value.kind != RecipeValue::Kind::Mapping)
    return;
  for (const RecipeValue::Entry &entry : value.entries) {
    std::string where = path.empty() ? entry.key : path + "." + entry.key;
    // `key: null` unsets a key: an override can take one out of a recipe.
    if (!entry.used && !entry.value.isNull()) {
      std::vector<std::string> known = value.asked;
      llvm::sort(known);
      known.erase(std::unique(known.begin(), known.end()), known.end());
      error(entry.keyLoc, "unknown key '" + entry.key + "'" +
                              (path.empty() ? "" : " in '" + path + "'") +
                              (known.empty() ? std::string()
                                             : "; expected one of: " +
                                                   llvm::join(known, ", ")));
      continue;
    }
    reportUnknown(entry.value, where);
  }
}

template <typename T, typename Parse>
std::optional<T> RecipeReader::parseScalar(const RecipeValue &value,
                                           StringRef key, StringRef what,
                                           Parse parse) {
  T result;
  if (value.kind != RecipeValue::Kind::Scalar ||
      parse(StringRef(value.scalar), result)) {
    error(value.loc,
          "'" + key + "' must be " + what + ", got '" + value.scalar + "'");
    return std::nullopt;
  }
  return result;
}

std::optional<std::string> RecipeReader::toString(const RecipeValue &value,
                                                  StringRef key) {
  if (value.kind != RecipeValue::Kind::Scalar) {
    error(value.loc, "'" + key + "' must be a string");
    return std::nullopt;
  }
  return value.scalar;
}

std::optional<double> RecipeReader::toNumber(const RecipeValue &value,
                                             StringRef key) {
  return parseScalar<double>(
      value, key, "a number",
      [](StringRef text, double &result) { return text.getAsDouble(result); });
}

std::optional<int64_t> RecipeReader::toInteger(const RecipeValue &value,
                                               StringRef key) {
  return parseScalar<long long>(value, key, "an integer",
                                [](StringRef text, long long &result) {
                                  return text.getAsInteger(10, result);
                                });
}

std::optional<bool> RecipeReader::toBoolean(const RecipeValue &value,
                                            StringRef key) {
  return parseScalar<bool>(
      value, key, "true or false", [](StringRef text, bool &result) {
        std::string lower = text.lower();
        if (lower == "true" || lower == "yes" || lower == "on")
          result = true;
        else if (lower == "false" || lower == "no" || lower == "off")
          result = false;
        else
          return true;
        return false;
      });
}

std::optional<Time> RecipeReader::toTime(const RecipeValue &value,
                                         StringRef key) {
  try {
    return parseTime(value.scalar);
  } catch (const std::invalid_argument &e) {
    error(value.loc, "'" + key + "': " + e.what());
    return std::nullopt;
  }
}

} // namespace composer::train
