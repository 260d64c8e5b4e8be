//===- MethodPassesEmitter.cpp - the method passes from TableGen ----------===//
//
// -gen-method-pass-list writes the arguments of the passes a .td file
// declares as MethodPass (MethodPass.td), for the MethodPassRegistration of
// the library that holds them: what tells a method from the infrastructure
// passes is its declaration, and no list is kept by hand.
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
  std::vector<StringRef> arguments;
  for (const Record *pass : records.getAllDerivedDefinitions("MethodPass"))
    arguments.push_back(pass->getValueAsString("argument"));
  // Sorted, so that users may binary-search it and its order does not
  // depend on the order of the definitions.
  llvm::sort(arguments);
  for (StringRef argument : arguments)
    os << '"' << argument << "\",\n";
  return false;
}
