//===- Passes.h - composer passes -------------------------------*- C++ -*-===//

#ifndef COMPOSER_PASSES_PASSES_H
#define COMPOSER_PASSES_PASSES_H

#include "composer/Dialect/Composer.h"
#include "composer/Support/TorchUpstream.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace composer {

#define GEN_PASS_DECL
#include "composer/Passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "composer/Passes/Passes.h.inc"

/// A method pass as its .td declares it (MethodPass.td).
struct MethodPassDeclaration {
  llvm::StringLiteral argument;
  /// The method leaves what training reaches as it is, by design.
  bool keepsAccuracy;
};

/// Declares the passes `declarations` names to be methods, from a static
/// object in the library that holds them: a method pass's .td declares it
/// with MethodPass (MethodPass.td), and composer-tblgen
/// -gen-method-pass-list lists those declarations:
///   static constexpr MethodPassDeclaration kMethods[] = {
///   #include "MethodPasses.h.inc"
///   };
///   static MethodPassRegistration methods(kMethods);
/// A pass plugin's methods join the composer library's when it is loaded.
/// The literals live as long as the library that registers them, which is
/// never unloaded.
struct MethodPassRegistration {
  explicit MethodPassRegistration(
      llvm::ArrayRef<MethodPassDeclaration> declarations);
};

/// Whether `argument` ("composer-blurpool") names a registered method pass.
bool isMethodPass(llvm::StringRef argument);

/// Whether `argument` names a registered method pass declared to keep
/// accuracy (MethodPass's `keepsAccuracy`).
bool methodKeepsAccuracy(llvm::StringRef argument);

/// The arguments of the registered method passes, sorted. Other passes,
/// composer's included, are infrastructure, which tools comparing methods
/// leave out.
llvm::ArrayRef<llvm::StringRef> getMethodPassArguments();

/// Registers the named method pipelines (composer-mild, ...).
void registerComposerPipelines();

/// Registers every composer pass and pipeline.
inline void registerComposerPassesAndPipelines() {
  registerComposerPasses();
  registerComposerPipelines();
}

} // namespace composer

#endif // COMPOSER_PASSES_PASSES_H
