//===- PipelineChoice.cpp - the method passes that pay on a model ---------===//

#include "composer/API/PipelineChoice.h"
#include "composer/Passes/Passes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"

#include <algorithm>

using namespace composer;

namespace {

std::string percent(double fraction) {
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%.0f%%", fraction * 100);
  return text;
}

std::string ratioText(double ratio) {
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%.2fx", ratio);
  return text;
}

/// The names in a report row's string array `key` (absent: none).
std::vector<std::string> strings(const llvm::json::Object &row,
                                 llvm::StringRef key) {
  std::vector<std::string> names;
  if (const llvm::json::Array *array = row.getArray(key))
    for (const llvm::json::Value &value : *array)
      if (std::optional<llvm::StringRef> name = value.getAsString())
        names.push_back(name->str());
  return names;
}

} // namespace

std::string PipelineChoice::pipeline() const {
  return "builtin.module(" + llvm::join(passes, ",") + ")";
}

void PipelineChoice::print(llvm::raw_ostream &os,
                           llvm::StringRef linePrefix) const {
  for (const PipelineCandidate &candidate : candidates) {
    os << linePrefix << candidate.pass << ": ";
    if (candidate.timeRatio)
      os << ratioText(*candidate.timeRatio) << " (+-"
         << percent(candidate.noise) << "): ";
    os << (candidate.chosen ? "chosen, " : "") << candidate.reason << "\n";
  }
  if (!combination.empty())
    os << linePrefix << combination << "\n";
  if (candidates.empty())
    os << linePrefix << "no method pass that keeps accuracy is registered\n";
}

llvm::json::Object PipelineChoice::toJson() const {
  llvm::json::Array rows;
  for (const PipelineCandidate &candidate : candidates)
    rows.push_back(llvm::json::Object{
        {"pass", candidate.pass},
        {"time_ratio", candidate.timeRatio
                           ? llvm::json::Value(*candidate.timeRatio)
                           : llvm::json::Value(nullptr)},
        {"noise", candidate.noise},
        {"chosen", candidate.chosen},
        {"reason", candidate.reason}});
  return llvm::json::Object{
      {"pipeline", pipeline()},
      {"passes", llvm::json::Array(passes)},
      {"combined_time_ratio", combinedRatio ? llvm::json::Value(*combinedRatio)
                                            : llvm::json::Value(nullptr)},
      {"combination", combination},
      {"candidates", std::move(rows)}};
}

std::optional<PipelineChoice>
composer::choosePipeline(const llvm::json::Object &report, std::string &error) {
  const llvm::json::Array *variants = report.getArray("variants");
  if (!variants) {
    error = "not a --report-costs=json report: no 'variants' array";
    return std::nullopt;
  }
  PipelineChoice choice;
  const llvm::json::Object *together = nullptr;
  for (const llvm::json::Value &value : *variants) {
    const llvm::json::Object *row = value.getAsObject();
    std::optional<llvm::StringRef> name =
        row ? row->getString("name") : std::nullopt;
    std::optional<llvm::StringRef> kind =
        row ? row->getString("kind") : std::nullopt;
    if (!name || !kind) {
      error = "a variant without a 'name' and a 'kind'";
      return std::nullopt;
    }
    if (*kind == "pipeline" && *name == kChosenPipelineName)
      together = row;
    if (*kind != "pass" || !methodKeepsAccuracy(*name))
      continue;
    PipelineCandidate candidate;
    candidate.pass = name->str();
    candidate.timeRatio = row->getNumber("time_ratio");
    candidate.noise = row->getNumber("noise").value_or(0);
    if (!candidate.timeRatio) {
      std::optional<llvm::StringRef> why = row->getString("verdict");
      candidate.reason = why ? why->str() : "not timed";
    } else if (*candidate.timeRatio < 1 - candidate.noise) {
      candidate.chosen = true;
      candidate.reason = "saves " + percent(1 - *candidate.timeRatio) +
                         " per step, beyond the noise";
      choice.passes.push_back(candidate.pass);
    } else if (*candidate.timeRatio > 1 + candidate.noise) {
      candidate.reason =
          "costs " + percent(*candidate.timeRatio - 1) + " per step";
    } else {
      candidate.reason = "no faster beyond the noise";
    }
    choice.candidates.push_back(std::move(candidate));
  }
  for (const std::string &name : strings(report, "not_applicable"))
    if (methodKeepsAccuracy(name))
      choice.candidates.push_back(
          {name, std::nullopt, 0, false, "changes nothing on this model"});
  if (const llvm::json::Array *failed = report.getArray("failed"))
    for (const llvm::json::Value &value : *failed) {
      const llvm::json::Object *row = value.getAsObject();
      std::optional<llvm::StringRef> name =
          row ? row->getString("name") : std::nullopt;
      if (name && methodKeepsAccuracy(*name))
        choice.candidates.push_back(
            {name->str(), std::nullopt, 0, false, "the pass failed"});
    }

  // Passes that pay alone may not pay together (a layout one kernel
  // library prefers in fp32 may not suit its bf16 kernels): where the
  // report timed them together, keep them together only if that beats the
  // best of them alone beyond the noise.
  if (choice.passes.size() < 2 || !together ||
      strings(*together, "passes") != choice.passes)
    return choice;
  choice.combinedRatio = together->getNumber("time_ratio");
  if (!choice.combinedRatio)
    return choice;
  PipelineCandidate *best = nullptr;
  for (PipelineCandidate &candidate : choice.candidates)
    if (candidate.chosen && (!best || *candidate.timeRatio < *best->timeRatio))
      best = &candidate;
  double noise = together->getNumber("noise").value_or(0);
  std::string measured = "together they step at " +
                         ratioText(*choice.combinedRatio) + ", " + best->pass +
                         " alone at " + ratioText(*best->timeRatio);
  if (*choice.combinedRatio < *best->timeRatio * (1 - noise)) {
    choice.combination = measured + ": all are kept";
    return choice;
  }
  choice.combination = measured +
                       ": together is no faster beyond the noise, so " +
                       best->pass + " alone is kept";
  for (PipelineCandidate &candidate : choice.candidates)
    if (candidate.chosen && &candidate != best) {
      candidate.chosen = false;
      candidate.reason += ", but adds nothing to " + best->pass;
    }
  choice.passes = {best->pass};
  return choice;
}
