//===- AtenKindsEmitter.h - the aten kind table from TableGen ---*- C++ -*-===//

#ifndef COMPOSER_TBLGEN_ATENKINDSEMITTER_H
#define COMPOSER_TBLGEN_ATENKINDSEMITTER_H

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

} // namespace composer::tblgen

#endif // COMPOSER_TBLGEN_ATENKINDSEMITTER_H
