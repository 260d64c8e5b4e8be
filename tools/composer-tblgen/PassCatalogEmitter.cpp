//===- PassCatalogEmitter.cpp - the passes' options as data ---------------===//
//
// -gen-pass-catalog writes, for every pass a .td file declares, its
// argument, summary, description and options (argument, type, default in
// the textual pipeline's spelling, the names an enumeration accepts, help),
// as the initializer of an array of composer::PassDescription
// (PassCatalog.h). Tools and bindings describe the passes from it, never
// from --help text.
//
//===----------------------------------------------------------------------===//

#include "Emitters.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/TableGen/Error.h"
#include "llvm/TableGen/Record.h"
#include "llvm/TableGen/TableGenBackend.h"

#include <string>
#include <utility>
#include <vector>

using namespace llvm;

namespace {

/// `text` on one line: runs of white space become one space.
std::string oneLine(StringRef text) {
  SmallVector<StringRef> words;
  SplitString(text, words);
  return join(words, " ");
}

void writeLiteral(raw_ostream &os, StringRef text) {
  os << '"';
  os.write_escaped(text);
  os << '"';
}

/// The (C++ enumerator, name) pairs of an enumeration option's
/// `clEnumValN(ENUMERATOR, "name", "help")` values.
std::vector<std::pair<std::string, std::string>>
getEnumValues(StringRef flags) {
  std::vector<std::pair<std::string, std::string>> values;
  static constexpr StringLiteral kValue = "clEnumValN(";
  for (size_t at = flags.find(kValue); at != StringRef::npos;
       at = flags.find(kValue, at + 1)) {
    StringRef rest = flags.drop_front(at + kValue.size());
    auto [enumerator, tail] = rest.split(',');
    StringRef name =
        tail.ltrim().drop_front().take_until([](char c) { return c == '"'; });
    values.emplace_back(enumerator.trim().str(), name.str());
  }
  return values;
}

/// The default as a pipeline spells it: a C++ string literal unquoted, an
/// enumerator by its option name.
std::string
getPipelineDefault(const Record &option,
                   ArrayRef<std::pair<std::string, std::string>> enumValues) {
  if (option.isSubClassOf("ListOption"))
    return "";
  StringRef value = option.getValueAsString("defaultValue").trim();
  for (const auto &[enumerator, name] : enumValues)
    if (value == enumerator)
      return name;
  if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
    return value.drop_front().drop_back().str();
  return value.str();
}

} // namespace

bool composer::tblgen::emitPassCatalog(raw_ostream &os,
                                       const RecordKeeper &records) {
  emitSourceFileHeader("The passes and their options", os, records);
  std::vector<Record *> passes = records.getAllDerivedDefinitions("PassBase");
  llvm::sort(passes, [](const Record *a, const Record *b) {
    return a->getValueAsString("argument") < b->getValueAsString("argument");
  });
  // Per pass, its options' enumeration names, then its options.
  for (const Record *pass : passes) {
    std::vector<Record *> options = pass->getValueAsListOfDefs("options");
    std::string prefix = "k" + pass->getName().str();
    for (const Record *option : options) {
      auto values =
          getEnumValues(option->getValueAsString("additionalOptFlags"));
      if (values.empty())
        continue;
      os << "static constexpr ::llvm::StringLiteral " << prefix
         << option->getValueAsString("cppName") << "Choices[] = {";
      for (const auto &value : values) {
        writeLiteral(os, value.second);
        os << ", ";
      }
      os << "};\n";
    }
    if (options.empty())
      continue;
    os << "static constexpr ::composer::PassOptionDescription " << prefix
       << "Options[] = {\n";
    for (const Record *option : options) {
      auto values =
          getEnumValues(option->getValueAsString("additionalOptFlags"));
      bool isList = option->isSubClassOf("ListOption");
      os << "  {";
      writeLiteral(os, option->getValueAsString("argument"));
      os << ", ";
      writeLiteral(os, option->getValueAsString("type"));
      os << ", " << (isList ? "true" : "false") << ", ";
      writeLiteral(os, getPipelineDefault(*option, values));
      os << ", ";
      if (values.empty())
        os << "{}";
      else
        os << prefix << option->getValueAsString("cppName") << "Choices";
      os << ", ";
      writeLiteral(os, oneLine(option->getValueAsString("description")));
      os << "},\n";
    }
    os << "};\n";
  }
  os << "static constexpr ::composer::PassDescription kPassCatalog[] = {\n";
  for (const Record *pass : passes) {
    os << "  {";
    writeLiteral(os, pass->getValueAsString("argument"));
    os << ", ";
    writeLiteral(os, oneLine(pass->getValueAsString("summary")));
    os << ", ";
    writeLiteral(os, oneLine(pass->getValueAsString("description")));
    os << ", ";
    if (pass->getValueAsListOfDefs("options").empty())
      os << "{}";
    else
      os << "k" << pass->getName() << "Options";
    os << "},\n";
  }
  os << "};\n";
  return false;
}
