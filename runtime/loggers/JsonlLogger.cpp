//===- JsonlLogger.cpp - Metrics as JSON lines ----------------------------===//
//
// One JSON object per line, flushed as it is written, so a killed run leaves
// only complete lines and a resumed run appends to the same file.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Logger.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace composer::runtime {

namespace {

std::string quote(const std::string &text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    default:
      if (c < 0x20) {
        char escaped[8];
        std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
        out += escaped;
      } else {
        out += char(c); // UTF-8 passes through
      }
    }
  }
  return out + "\"";
}

/// JSON has no NaN or infinity; those become the strings Python's
/// float() reads back.
std::string number(double value) {
  if (std::isnan(value))
    return "\"nan\"";
  if (std::isinf(value))
    return value > 0 ? "\"inf\"" : "\"-inf\"";
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.9g", value);
  return buffer;
}

class JsonlLogger : public LoggerDestination {
public:
  explicit JsonlLogger(const std::string &path) : path_(path) {
    std::filesystem::path parent = std::filesystem::path(path).parent_path();
    std::error_code ignored;
    if (!parent.empty())
      std::filesystem::create_directories(parent, ignored);
    out_.open(path, std::ios::out | std::ios::app | std::ios::binary);
    if (!out_)
      throw std::runtime_error("cannot open JSONL log '" + path +
                               "' for appending");
  }

  void logMetrics(const std::map<std::string, double> &metrics,
                  int64_t step) override {
    std::string line = "{\"step\": " + std::to_string(step);
    for (const auto &[name, value] : metrics)
      line += ", " + quote(name) + ": " + number(value);
    writeLine(line + "}");
  }

  void logHyperparameters(
      const std::map<std::string, std::string> &hyperparameters) override {
    std::string line = "{\"hyperparameters\": {";
    bool first = true;
    for (const auto &[name, value] : hyperparameters) {
      line += (first ? "" : ", ") + quote(name) + ": " + quote(value);
      first = false;
    }
    writeLine(line + "}}");
  }

  void flush() override { out_.flush(); }

private:
  void writeLine(const std::string &line) {
    out_ << line << '\n';
    out_.flush();
    if (!out_)
      throw std::runtime_error("cannot write to JSONL log '" + path_ + "'");
  }

  std::string path_;
  std::ofstream out_;
};

} // namespace

std::unique_ptr<LoggerDestination> createJsonlLogger(const std::string &path) {
  return std::make_unique<JsonlLogger>(path);
}

} // namespace composer::runtime
