//===- PassCatalog.h - the passes and pipelines as data ---------*- C++ -*-===//
//
// What each composer pass and named pipeline is, with its options, their
// types and defaults, for tools and bindings that describe them (the Python
// package's composer_opt.passes()). The passes' entries are generated from
// their ODS declarations (composer-tblgen -gen-pass-catalog); the
// pipelines' are the table that registers them.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_PASSES_PASSCATALOG_H
#define COMPOSER_PASSES_PASSCATALOG_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace composer {

struct PassOptionDescription {
  /// As a pipeline spells it: "min-channels".
  llvm::StringLiteral argument;
  /// The C++ type of the option (of each element for a list): "bool",
  /// "int64_t", "double", "std::string", or an enumeration's.
  llvm::StringLiteral type;
  bool isList;
  /// As a pipeline spells it ("16", "bf16"); empty for a list.
  llvm::StringLiteral defaultValue;
  /// The names an enumeration accepts; empty for other types.
  llvm::ArrayRef<llvm::StringLiteral> choices;
  llvm::StringLiteral description;
};

struct PassDescription {
  /// "composer-blurpool".
  llvm::StringLiteral argument;
  llvm::StringLiteral summary;
  llvm::StringLiteral description;
  llvm::ArrayRef<PassOptionDescription> options;
};

/// Composer's passes, sorted by argument.
llvm::ArrayRef<PassDescription> getComposerPassCatalog();

struct PipelineDescription {
  /// "composer-mild".
  llvm::StringLiteral name;
  llvm::StringLiteral summary;
  void (*addPasses)(mlir::OpPassManager &pm);
};

/// The named method pipelines registerComposerPipelines registers.
llvm::ArrayRef<PipelineDescription> getComposerPipelines();

} // namespace composer

#endif // COMPOSER_PASSES_PASSCATALOG_H
