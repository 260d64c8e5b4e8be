//===- Emitters.h - composer-tblgen's backends ------------------*- C++ -*-===//

#ifndef COMPOSER_TBLGEN_EMITTERS_H
#define COMPOSER_TBLGEN_EMITTERS_H

#include "llvm/Support/raw_ostream.h"

namespace llvm {
class RecordKeeper;
} // namespace llvm

namespace composer::tblgen {

/// The AtenKind enumeration of every AtenKind record (and in-place form).
bool emitAtenKindDecls(llvm::raw_ostream &os,
                       const llvm::RecordKeeper &records);

/// The AtenKindInfo table, in the enumeration's order.
bool emitAtenKindDefs(llvm::raw_ostream &os, const llvm::RecordKeeper &records);

/// The argument of every MethodPass record, sorted, as string literals
/// separated by commas: the initializer of an array.
bool emitMethodPassList(llvm::raw_ostream &os,
                        const llvm::RecordKeeper &records);

/// Every pass's argument, summary, description and options, as arrays of
/// composer::PassDescription and composer::PassOptionDescription
/// (composer/Passes/PassCatalog.h); the last, kPassCatalog, lists them all.
bool emitPassCatalog(llvm::raw_ostream &os, const llvm::RecordKeeper &records);

} // namespace composer::tblgen

#endif // COMPOSER_TBLGEN_EMITTERS_H
