//===- MethodPassesEmitter.cpp - the method passes from TableGen ----------===//
//
// -gen-method-pass-list writes, for each pass a .td file declares as
// MethodPass (MethodPass.td), a MethodPassDeclaration initializer
// ({argument, keepsAccuracy}) for the MethodPassRegistration of the library
// that holds them: what tells a method from the infrastructure passes is its
// declaration, and no list is kept by hand.
//
//===----------------------------------------------------------------------===//

#include "Emitters.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/TableGen/Record.h"
#include "llvm/TableGen/TableGenBackend.h"

#include <vector>

using namespace llvm;

bool composer::tblgen::emitMethodPassList(raw_ostream &os,
                                          const RecordKeeper &records) {
  emitSourceFileHeader("The arguments of the method passes", os, records);
  std::vector<std::pair<StringRef, bool>> passes;
  for (const Record *pass : records.getAllDerivedDefinitions("MethodPass"))
    passes.emplace_back(pass->getValueAsString("argument"),
                        pass->getValueAsBit("keepsAccuracy"));
  // Sorted, so that users may binary-search it and its order does not
  // depend on the order of the definitions.
  llvm::sort(passes);
  for (auto [argument, keepsAccuracy] : passes)
    os << "{\"" << argument << "\", " << (keepsAccuracy ? "true" : "false")
       << "},\n";
  return false;
}
