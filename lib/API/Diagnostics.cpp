//===- Diagnostics.cpp - compiler diagnostics as data ---------------------===//

#include "composer/API/Diagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace composer;

char DiagnosticError::ID = 0;

std::string composer::printLocation(Location loc) {
  if (auto fileLoc = loc->findInstanceOf<FileLineColLoc>())
    return llvm::formatv("{0}:{1}:{2}", fileLoc.getFilename().getValue(),
                         fileLoc.getLine(), fileLoc.getColumn());
  std::string text;
  llvm::raw_string_ostream(text) << loc;
  return text;
}

DiagnosticInfo DiagnosticInfo::get(const Diagnostic &diagnostic) {
  DiagnosticInfo info;
  info.severity = diagnostic.getSeverity();
  Location loc = diagnostic.getLocation();
  info.location = printLocation(loc);
  if (auto fileLoc = loc->findInstanceOf<FileLineColLoc>()) {
    info.file = fileLoc.getFilename().str();
    info.line = fileLoc.getLine();
    info.column = fileLoc.getColumn();
  }
  info.message = diagnostic.str();
  for (const Diagnostic &note : diagnostic.getNotes())
    info.notes.push_back(get(note));
  return info;
}

StringRef composer::getSeverityName(DiagnosticSeverity severity) {
  switch (severity) {
  case DiagnosticSeverity::Error:
    return "error";
  case DiagnosticSeverity::Warning:
    return "warning";
  case DiagnosticSeverity::Remark:
    return "remark";
  case DiagnosticSeverity::Note:
    return "note";
  }
  llvm_unreachable("unknown severity");
}

void DiagnosticError::log(llvm::raw_ostream &os) const {
  for (const DiagnosticInfo &diagnostic : diagnostics) {
    os << diagnostic.location << ": " << getSeverityName(diagnostic.severity)
       << ": " << diagnostic.message << "\n";
    for (const DiagnosticInfo &note : diagnostic.notes)
      os << note.location << ": note: " << note.message << "\n";
  }
}

std::error_code DiagnosticError::convertToErrorCode() const {
  return llvm::inconvertibleErrorCode();
}

DiagnosticCollector::DiagnosticCollector(MLIRContext &context)
    : handler(&context, [this](Diagnostic &diagnostic) {
        if (diagnostic.getSeverity() == DiagnosticSeverity::Error)
          errors.push_back(DiagnosticInfo::get(diagnostic));
        else if (diagnostic.getSeverity() == DiagnosticSeverity::Warning)
          warnings.push_back(DiagnosticInfo::get(diagnostic));
        return success();
      }) {}

llvm::Error DiagnosticCollector::takeError(llvm::StringRef fallback) {
  if (errors.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(), fallback);
  return llvm::make_error<DiagnosticError>(std::exchange(errors, {}));
}

std::vector<DiagnosticInfo> DiagnosticCollector::takeWarnings() {
  return std::exchange(warnings, {});
}
