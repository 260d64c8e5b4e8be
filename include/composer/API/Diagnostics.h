//===- Diagnostics.h - compiler diagnostics as data -------------*- C++ -*-===//
//
// What MLIR's diagnostics say, kept as data for callers that are not a
// terminal: the C++ API's errors carry them (DiagnosticError), and the
// Python package raises them as exceptions with their locations and notes.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_API_DIAGNOSTICS_H
#define COMPOSER_API_DIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace composer {

/// One diagnostic: where, how severe, what, and its notes.
struct DiagnosticInfo {
  mlir::DiagnosticSeverity severity = mlir::DiagnosticSeverity::Error;
  /// As printLocation prints it.
  std::string location;
  /// The file, line and column of the first file location within it (the
  /// user's Python line for an imported model); empty and 0 when it has
  /// none.
  std::string file;
  unsigned line = 0;
  unsigned column = 0;
  std::string message;
  /// Empty for a note.
  std::vector<DiagnosticInfo> notes;

  /// Builds the record of `diagnostic` and its notes.
  static DiagnosticInfo get(const mlir::Diagnostic &diagnostic);
};

/// `model.py:12:8` for a location within a file, as composer-opt prints
/// it; otherwise as MLIR prints the location.
std::string printLocation(mlir::Location loc);

/// "error", "warning", "remark" or "note", as diagnostics print it.
llvm::StringRef getSeverityName(mlir::DiagnosticSeverity severity);

/// An error made of the diagnostics that reported it, in order. As text
/// (llvm::toString) it reads as the tool prints it: `LOC: error: MESSAGE`,
/// then `LOC: note: MESSAGE` for each note, a line each.
class DiagnosticError : public llvm::ErrorInfo<DiagnosticError> {
public:
  static char ID;

  explicit DiagnosticError(std::vector<DiagnosticInfo> diagnostics)
      : diagnostics(std::move(diagnostics)) {}

  const std::vector<DiagnosticInfo> &getDiagnostics() const {
    return diagnostics;
  }

  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override;

private:
  std::vector<DiagnosticInfo> diagnostics;
};

/// Records the diagnostics of a context while it lives, instead of
/// printing them: errors for takeError, warnings for takeWarnings. Remarks
/// (the passes' site counts, which SiteReports.h gives as data) are
/// dropped.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(mlir::MLIRContext &context);

  /// The errors recorded since the last call, as a DiagnosticError; an
  /// error of `fallback` alone when none was recorded.
  llvm::Error takeError(llvm::StringRef fallback);

  /// The warnings recorded since the last call.
  std::vector<DiagnosticInfo> takeWarnings();

private:
  std::vector<DiagnosticInfo> errors;
  std::vector<DiagnosticInfo> warnings;
  mlir::ScopedDiagnosticHandler handler;
};

} // namespace composer

#endif // COMPOSER_API_DIAGNOSTICS_H
