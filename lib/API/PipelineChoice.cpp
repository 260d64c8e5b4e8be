//===- PipelineChoice.cpp - the method passes that pay on a model ---------===//

#include "composer/API/PipelineChoice.h"
#include "composer/API/CostReport.h"
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

std::string composer::getCombinationName(llvm::ArrayRef<std::string> passes) {
  std::vector<llvm::StringRef> names;
  for (llvm::StringRef pass : passes) {
    pass.consume_front("composer-");
    names.push_back(pass);
  }
  return llvm::join(names, "+");
}

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
  for (const std::string &line : combination)
    os << linePrefix << line << "\n";
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
      {"combination", llvm::json::Array(combination)},
      {"candidates", std::move(rows)}};
}

namespace {

/// The greedy growth of the set (PipelineChoice.h) over `choice`'s
/// candidates that pay alone, against the rows of `variants` that time
/// sets together.
class Combiner {
public:
  Combiner(PipelineChoice &choice, const llvm::json::Array &variants)
      : choice(choice), variants(variants) {}

  void run() {
    std::vector<PipelineCandidate *> payers;
    for (PipelineCandidate &candidate : choice.candidates)
      if (candidate.chosen)
        payers.push_back(&candidate);
    if (payers.empty())
      return;
    std::stable_sort(payers.begin(), payers.end(),
                     [](PipelineCandidate *a, PipelineCandidate *b) {
                       return *a->timeRatio < *b->timeRatio;
                     });
    std::vector<PipelineCandidate *> kept = {payers.front()};
    double keptRatio = *payers.front()->timeRatio;
    for (PipelineCandidate *next : llvm::drop_begin(payers)) {
      std::vector<std::string> tried = inReportOrder(kept, next);
      std::string without = keptNames(kept);
      // Once one set is untimed, the sets after it depend on its time.
      const llvm::json::Object *row =
          choice.untimed.empty() ? findTogether(tried) : nullptr;
      if (!row) {
        if (choice.untimed.empty())
          choice.untimed = tried;
        reject(next, "not tried with " + without + ": untimed");
        continue;
      }
      std::optional<double> ratio = row->getNumber("time_ratio");
      double noise = row->getNumber("noise").value_or(0);
      if (!ratio) {
        reject(next, "could not be timed with " + without);
        continue;
      }
      std::string line = without + " + " + next->pass + ": " +
                         ratioText(*ratio) + ", against " +
                         ratioText(keptRatio) + " without it: ";
      if (classifyStepRatio(*ratio / keptRatio, noise) == StepRatio::Cheaper) {
        choice.combination.push_back(line + "kept");
        kept.push_back(next);
        keptRatio = *ratio;
        continue;
      }
      choice.combination.push_back(line + "no faster beyond the noise");
      reject(next, "adds nothing to " + without);
    }
    choice.passes.clear();
    for (const PipelineCandidate &candidate : choice.candidates)
      if (candidate.chosen)
        choice.passes.push_back(candidate.pass);
    if (kept.size() > 1)
      choice.combinedRatio = keptRatio;
  }

private:
  void reject(PipelineCandidate *candidate, const std::string &why) {
    candidate->chosen = false;
    candidate->reason += ", but " + why;
  }

  /// `kept` and `next` in the order of the candidates (the report's).
  std::vector<std::string>
  inReportOrder(llvm::ArrayRef<PipelineCandidate *> kept,
                PipelineCandidate *next) {
    std::vector<std::string> passes;
    for (const PipelineCandidate &candidate : choice.candidates)
      if (&candidate == next || llvm::is_contained(kept, &candidate))
        passes.push_back(candidate.pass);
    return passes;
  }

  std::string keptNames(llvm::ArrayRef<PipelineCandidate *> kept) {
    std::vector<std::string> names;
    for (PipelineCandidate *candidate : kept)
      names.push_back(candidate->pass);
    return llvm::join(names, " + ");
  }

  const llvm::json::Object *findTogether(llvm::ArrayRef<std::string> passes) {
    for (const llvm::json::Value &value : variants) {
      const llvm::json::Object *row = value.getAsObject();
      if (row && row->getString("kind") == "pipeline" &&
          llvm::ArrayRef(strings(*row, "passes")) == passes)
        return row;
    }
    return nullptr;
  }

  PipelineChoice &choice;
  const llvm::json::Array &variants;
};

} // namespace

std::optional<PipelineChoice>
composer::choosePipeline(const llvm::json::Object &report, std::string &error) {
  const llvm::json::Array *variants = report.getArray("variants");
  if (!variants) {
    error = "not a --report-costs=json report: no 'variants' array";
    return std::nullopt;
  }
  PipelineChoice choice;
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
    if (*kind != "pass" || !methodKeepsAccuracy(*name))
      continue;
    PipelineCandidate candidate;
    candidate.pass = name->str();
    candidate.timeRatio = row->getNumber("time_ratio");
    candidate.noise = row->getNumber("noise").value_or(0);
    if (!candidate.timeRatio) {
      std::optional<llvm::StringRef> why = row->getString("verdict");
      candidate.reason = why ? why->str() : "not timed";
    } else {
      switch (classifyStepRatio(*candidate.timeRatio, candidate.noise)) {
      case StepRatio::Cheaper:
        candidate.chosen = true;
        candidate.reason = "saves " + percent(1 - *candidate.timeRatio) +
                           " per step, beyond the noise";
        break;
      case StepRatio::Costlier:
        candidate.reason =
            "costs " + percent(*candidate.timeRatio - 1) + " per step";
        break;
      case StepRatio::WithinNoise:
        candidate.reason = "no faster beyond the noise";
        break;
      }
    }
    choice.candidates.push_back(std::move(candidate));
  }
  Combiner(choice, *variants).run();
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
  return choice;
}
