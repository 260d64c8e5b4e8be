//===- Arguments.h - composer-data's option values --------------*- C++ -*-===//
#ifndef COMPOSER_DATA_ARGUMENTS_H
#define COMPOSER_DATA_ARGUMENTS_H

#include <cstdint>
#include <stdexcept>
#include <string>

namespace composer::data {

/// `text` as an integer of at least `minimum`; else std::invalid_argument
/// naming `option` (a usage error).
inline int64_t integerArgument(const std::string &option,
                               const std::string &text, int64_t minimum) {
  size_t used = 0;
  int64_t value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception &) {
  }
  if (used != text.size() || value < minimum)
    throw std::invalid_argument(option + " takes an integer of at least " +
                                std::to_string(minimum) + ", got '" + text +
                                "'");
  return value;
}

} // namespace composer::data

#endif // COMPOSER_DATA_ARGUMENTS_H
