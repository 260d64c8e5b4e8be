//===- AtenKindsEmitter.cpp - the aten kind table from TableGen -----------===//
//
// -gen-aten-kind-decls writes the AtenKind enumeration; -gen-aten-kind-defs
// writes the table of AtenKindInfo, one entry per enumerator and in its
// order. Enumerators are sorted by kind name, so the table is searched by
// name with a binary search.
//
//===----------------------------------------------------------------------===//

#include "Emitters.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/TableGen/Error.h"
#include "llvm/TableGen/Record.h"
#include "llvm/TableGen/TableGenBackend.h"

#include <string>
#include <vector>

using namespace llvm;

namespace {

/// One table entry: a declared kind or the in-place form it declares.
struct KindEntry {
  std::string name;    // aten::relu_
  std::string cppName; // relu_
  const Record *record;
  bool inPlace;
};

bool isIdentifier(StringRef name) {
  return !name.empty() && !isDigit(name.front()) &&
         all_of(name, [](char c) { return isAlnum(c) || c == '_'; }) &&
         !name.starts_with("__");
}

std::vector<KindEntry> collectKinds(const RecordKeeper &records) {
  std::vector<KindEntry> entries;
  for (const Record *record : records.getAllDerivedDefinitions("AtenKind")) {
    StringRef name = record->getValueAsString("name");
    std::string cppName = record->getValueAsString("cppName").str();
    if (cppName.empty())
      cppName = name.str();
    if (!isIdentifier(cppName))
      PrintFatalError(record->getLoc(), "kind '" + name +
                                            "' needs a cppName: '" + cppName +
                                            "' is no C++ identifier");
    entries.push_back({("aten::" + name).str(), cppName, record, false});
    if (record->getValueAsBit("hasInPlace"))
      entries.push_back(
          {("aten::" + name + "_").str(), cppName + "_", record, true});
  }
  llvm::sort(entries, [](const KindEntry &a, const KindEntry &b) {
    return StringRef(a.name) < StringRef(b.name);
  });
  StringSet<> names, cppNames;
  for (const KindEntry &entry : entries) {
    if (!names.insert(entry.name).second)
      PrintFatalError(entry.record->getLoc(),
                      "kind '" + entry.name + "' is declared twice");
    if (!cppNames.insert(entry.cppName).second)
      PrintFatalError(entry.record->getLoc(),
                      "enumerator '" + entry.cppName + "' is used twice");
  }
  return entries;
}

bool emitDecls(raw_ostream &os, const RecordKeeper &records) {
  emitSourceFileHeader("The aten kinds the passes know", os, records);
  std::vector<KindEntry> entries = collectKinds(records);
  os << "enum class AtenKind : uint16_t {\n";
  for (const KindEntry &entry : entries)
    os << "  " << entry.cppName << ", // " << entry.name << "\n";
  os << "};\n\n";
  os << "inline constexpr unsigned kNumAtenKinds = " << entries.size() << ";\n";
  return false;
}

bool emitDefs(raw_ostream &os, const RecordKeeper &records) {
  emitSourceFileHeader("The traits of the aten kinds the passes know", os,
                       records);
  std::vector<KindEntry> entries = collectKinds(records);
  os << "static constexpr AtenKindInfo kAtenKindTable[] = {\n";
  for (const KindEntry &entry : entries) {
    const Record &record = *entry.record;
    std::vector<std::string> traits;
    std::vector<Record *> declared = record.getValueAsListOfDefs("traits");
    bool isView = llvm::any_of(declared, [](const Record *trait) {
      return trait->getValueAsString("name") == "View";
    });
    for (const Record *trait : declared) {
      StringRef traitName = trait->getValueAsString("name");
      // An in-place view changes operand 0's metadata: it is no longer
      // shape-preserving.
      if (entry.inPlace && isView && traitName == "ShapePreserving")
        continue;
      traits.push_back(("AtenTrait::" + traitName).str());
    }
    if (entry.inPlace) {
      traits.push_back("AtenTrait::InPlace");
      if (!isView && !is_contained(traits, "AtenTrait::ShapePreserving"))
        traits.push_back("AtenTrait::ShapePreserving");
    } else if (StringRef(entry.name).ends_with("_")) {
      // A kind declared by its in-place name (copy_, resize_).
      traits.push_back("AtenTrait::InPlace");
      if (!isView)
        traits.push_back("AtenTrait::ShapePreserving");
    }
    // AtenKindInfo::getAutocastClass(Any) relies on this.
    StringRef cpuClass =
        record.getValueAsDef("cpuAutocast")->getValueAsString("name");
    StringRef cudaClass =
        record.getValueAsDef("cudaAutocast")->getValueAsString("name");
    if (cpuClass != cudaClass && cpuClass != "Fp32" && cudaClass != "Fp32")
      PrintFatalError(record.getLoc(),
                      "autocast classes may differ between devices only "
                      "where one is Fp32");
    uint32_t operandMask = 0;
    for (int64_t operand : record.getValueAsListOfInts("autocastOperands")) {
      if (operand < 0 || operand >= 32)
        PrintFatalError(record.getLoc(), "autocast operand out of range");
      operandMask |= 1u << operand;
    }
    os << formatv("  {{AtenKind::{0}, \"{1}\", {2}, AutocastClass::{3}, "
                  "AutocastClass::{4}, {5:x}u, FlopRule::{6}},\n",
                  entry.cppName, entry.name,
                  traits.empty() ? std::string("AtenTrait::None")
                                 : join(traits, " | "),
                  cpuClass, cudaClass, operandMask,
                  record.getValueAsDef("flopRule")->getValueAsString("name"));
  }
  os << "};\n";
  return false;
}

} // namespace

bool composer::tblgen::emitAtenKindDecls(raw_ostream &os,
                                         const RecordKeeper &records) {
  return emitDecls(os, records);
}

bool composer::tblgen::emitAtenKindDefs(raw_ostream &os,
                                        const RecordKeeper &records) {
  return emitDefs(os, records);
}
