//===- RecipeTree.cpp - A recipe as an editable YAML tree -----------------===//

#include "RecipeTree.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/YAMLParser.h"

using llvm::SMLoc;
using llvm::StringRef;
using llvm::Twine;

namespace composer::train {

RecipeValue::Entry *RecipeValue::find(StringRef key) {
  for (Entry &entry : entries)
    if (entry.key == key)
      return &entry;
  return nullptr;
}

namespace {

class Parser {
public:
  Parser(llvm::SourceMgr &sourceMgr) : sourceMgr(sourceMgr) {}

  /// Parses the buffer `id` into one RecipeValue; false after a diagnostic.
  bool parse(unsigned id, RecipeValue &result) {
    llvm::yaml::Stream stream(sourceMgr.getMemoryBuffer(id)->getMemBufferRef(),
                              sourceMgr,
                              /*ShowColors=*/false);
    bool first = true;
    for (llvm::yaml::Document &document : stream) {
      if (!first) {
        error(document.getRoot()->getSourceRange().Start,
              "a recipe is one YAML document");
        return false;
      }
      first = false;
      if (!convert(document.getRoot(), result))
        return false;
    }
    return !stream.failed() && !failed;
  }

private:
  void error(SMLoc loc, const Twine &message) {
    sourceMgr.PrintMessage(loc, llvm::SourceMgr::DK_Error, message);
    failed = true;
  }

  bool convert(llvm::yaml::Node *node, RecipeValue &out) {
    if (!node)
      return false;
    out.loc = node->getSourceRange().Start;
    if (llvm::isa<llvm::yaml::NullNode>(node)) {
      out.kind = RecipeValue::Kind::Null;
      return true;
    }
    if (auto *scalar = llvm::dyn_cast<llvm::yaml::ScalarNode>(node)) {
      llvm::SmallString<32> storage;
      out.kind = RecipeValue::Kind::Scalar;
      out.scalar = scalar->getValue(storage).str();
      if (out.scalar == "~" || out.scalar == "null")
        out.kind = RecipeValue::Kind::Null;
      return true;
    }
    if (auto *block = llvm::dyn_cast<llvm::yaml::BlockScalarNode>(node)) {
      out.kind = RecipeValue::Kind::Scalar;
      out.scalar = block->getValue().str();
      return true;
    }
    if (auto *sequence = llvm::dyn_cast<llvm::yaml::SequenceNode>(node)) {
      out.kind = RecipeValue::Kind::Sequence;
      for (llvm::yaml::Node &item : *sequence) {
        out.items.emplace_back();
        if (!convert(&item, out.items.back()))
          return false;
      }
      return !failed;
    }
    if (auto *mapping = llvm::dyn_cast<llvm::yaml::MappingNode>(node)) {
      out.kind = RecipeValue::Kind::Mapping;
      for (llvm::yaml::KeyValueNode &pair : *mapping) {
        auto *key =
            llvm::dyn_cast_or_null<llvm::yaml::ScalarNode>(pair.getKey());
        if (!key) {
          error(pair.getSourceRange().Start, "keys must be plain scalars");
          return false;
        }
        llvm::SmallString<32> storage;
        std::string name = key->getValue(storage).str();
        if (out.find(name)) {
          error(key->getSourceRange().Start, "duplicate key '" + name + "'");
          return false;
        }
        RecipeValue::Entry entry{name, key->getSourceRange().Start,
                                 RecipeValue(), false};
        if (!convert(pair.getValue(), entry.value))
          return false;
        out.entries.push_back(std::move(entry));
      }
      return !failed;
    }
    error(out.loc, "anchors, aliases and tags are not supported in recipes");
    return false;
  }

  llvm::SourceMgr &sourceMgr;
  bool failed = false;
};

/// Sets `dotted.key=value` in `root`.
bool applyOverride(llvm::SourceMgr &sourceMgr, RecipeValue &root,
                   const std::string &text, llvm::raw_ostream &errors) {
  size_t equals = text.find('=');
  if (equals == std::string::npos || equals == 0) {
    errors << "error: command-line override '" << text
           << "' must be key=value (e.g. optimizer.lr=0.05)\n";
    return false;
  }
  std::string path = text.substr(0, equals);
  unsigned id = sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text.substr(equals + 1),
                                           "<command line: " + path + ">"),
      SMLoc());
  RecipeValue value;
  Parser parser(sourceMgr);
  if (!parser.parse(id, value))
    return false;

  llvm::SmallVector<StringRef> keys;
  StringRef(path).split(keys, '.');
  RecipeValue *node = &root;
  for (auto [index, key] : llvm::enumerate(keys)) {
    if (key.empty()) {
      errors << "error: command-line override '" << text
             << "' has an empty key\n";
      return false;
    }
    if (node->kind == RecipeValue::Kind::Null) {
      // A mapping the override creates is reported at the override.
      node->kind = RecipeValue::Kind::Mapping;
      if (!node->loc.isValid())
        node->loc = value.loc;
    }
    if (node->kind != RecipeValue::Kind::Mapping) {
      errors << "error: command-line override '" << text << "': '"
             << llvm::join(llvm::ArrayRef(keys).take_front(index), ".")
             << "' is not a mapping\n";
      return false;
    }
    RecipeValue::Entry *entry = node->find(key);
    if (!entry) {
      node->entries.push_back({key.str(), value.loc, RecipeValue(), false});
      entry = &node->entries.back();
    }
    entry->keyLoc = value.loc;
    node = &entry->value;
  }
  *node = std::move(value);
  return true;
}

/// Writes `value` after its key; a mapping's entries go on their own lines,
/// `indent` + 2 columns in (the root's at column 0).
void emit(const RecipeValue &value, llvm::raw_ostream &out, int indent) {
  switch (value.kind) {
  case RecipeValue::Kind::Null:
    out << " null\n";
    return;
  case RecipeValue::Kind::Scalar:
    out << " " << value.scalar << "\n";
    return;
  case RecipeValue::Kind::Sequence:
    out << " [";
    for (auto [index, item] : llvm::enumerate(value.items))
      out << (index ? ", " : "") << item.scalar;
    out << "]\n";
    return;
  case RecipeValue::Kind::Mapping:
    if (indent >= 0)
      out << "\n";
    for (const RecipeValue::Entry &entry : value.entries) {
      out.indent(std::max(indent + 2, 0)) << entry.key << ":";
      emit(entry.value, out, indent + 2);
    }
    return;
  }
}

} // namespace

bool readRecipeTree(llvm::SourceMgr &sourceMgr, const std::string &recipePath,
                    const std::vector<std::string> &overrides,
                    llvm::raw_ostream &errors, RecipeValue &root) {
  std::unique_ptr<llvm::MemoryBuffer> recipe;
  if (!recipePath.empty()) {
    auto buffer = llvm::MemoryBuffer::getFile(recipePath);
    if (!buffer) {
      errors << "composer-train: error: cannot read recipe '" << recipePath
             << "': " << buffer.getError().message() << "\n";
      return false;
    }
    recipe = std::move(*buffer);
  }
  return readRecipeTree(sourceMgr, std::move(recipe), overrides, errors, root);
}

bool readRecipeTree(llvm::SourceMgr &sourceMgr,
                    std::unique_ptr<llvm::MemoryBuffer> recipe,
                    const std::vector<std::string> &overrides,
                    llvm::raw_ostream &errors, RecipeValue &root) {
  sourceMgr.setDiagHandler(
      [](const llvm::SMDiagnostic &diagnostic, void *context) {
        diagnostic.print("composer-train",
                         *static_cast<llvm::raw_ostream *>(context),
                         /*ShowColors=*/false);
      },
      &errors);
  root.kind = RecipeValue::Kind::Mapping;
  if (recipe) {
    unsigned id = sourceMgr.AddNewSourceBuffer(std::move(recipe), SMLoc());
    Parser parser(sourceMgr);
    if (!parser.parse(id, root))
      return false;
    if (root.isNull())
      root.kind = RecipeValue::Kind::Mapping;
    if (root.kind != RecipeValue::Kind::Mapping) {
      sourceMgr.PrintMessage(root.loc, llvm::SourceMgr::DK_Error,
                             "a recipe must be a mapping of keys to values");
      return false;
    }
  }
  for (const std::string &text : overrides)
    if (!applyOverride(sourceMgr, root, text, errors))
      return false;
  return true;
}

static void flatten(const RecipeValue &value, const std::string &key,
                    std::map<std::string, std::string> &into) {
  switch (value.kind) {
  case RecipeValue::Kind::Null:
    into[key] = "null";
    return;
  case RecipeValue::Kind::Scalar:
    into[key] = value.scalar;
    return;
  case RecipeValue::Kind::Sequence:
    if (llvm::all_of(value.items, [](const RecipeValue &item) {
          return item.kind == RecipeValue::Kind::Scalar;
        })) {
      std::string text = "[";
      for (auto [index, item] : llvm::enumerate(value.items))
        text += (index ? ", " : "") + item.scalar;
      into[key] = text + "]";
      return;
    }
    for (auto [index, item] : llvm::enumerate(value.items))
      flatten(item, key + "." + std::to_string(index), into);
    return;
  case RecipeValue::Kind::Mapping:
    if (value.entries.empty() && !key.empty())
      into[key] = "{}";
    for (const RecipeValue::Entry &entry : value.entries)
      flatten(entry.value, key.empty() ? entry.key : key + "." + entry.key,
              into);
    return;
  }
}

std::map<std::string, std::string> flattenRecipeTree(const RecipeValue &root) {
  std::map<std::string, std::string> flat;
  flatten(root, "", flat);
  return flat;
}

void printRecipeTree(const RecipeValue &root, llvm::raw_ostream &out) {
  emit(root, out, -2);
}

} // namespace composer::train
