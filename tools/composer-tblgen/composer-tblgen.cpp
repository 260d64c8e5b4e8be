//===- composer-tblgen.cpp - composer's TableGen backends -----------------===//
//
// The generators for what ODS does not cover; mlir-tblgen generates the
// dialect itself.
//
//===----------------------------------------------------------------------===//

#include "Emitters.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/TableGen/Main.h"
#include "llvm/TableGen/Record.h"

using namespace llvm;

namespace {

enum class Action {
  GenAtenKindDecls,
  GenAtenKindDefs,
  GenMethodPassList,
  GenPassCatalog
};

cl::opt<Action> action(
    cl::desc("What to generate:"),
    cl::values(clEnumValN(Action::GenAtenKindDecls, "gen-aten-kind-decls",
                          "The AtenKind enumeration"),
               clEnumValN(Action::GenAtenKindDefs, "gen-aten-kind-defs",
                          "The table of aten kind traits"),
               clEnumValN(Action::GenMethodPassList, "gen-method-pass-list",
                          "The arguments of the method passes"),
               clEnumValN(Action::GenPassCatalog, "gen-pass-catalog",
                          "Every pass with its options, as data")),
    cl::Required);

bool generate(raw_ostream &os, RecordKeeper &records) {
  switch (action) {
  case Action::GenAtenKindDecls:
    return composer::tblgen::emitAtenKindDecls(os, records);
  case Action::GenAtenKindDefs:
    return composer::tblgen::emitAtenKindDefs(os, records);
  case Action::GenMethodPassList:
    return composer::tblgen::emitMethodPassList(os, records);
  case Action::GenPassCatalog:
    return composer::tblgen::emitPassCatalog(os, records);
  }
  return true;
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv);
  return TableGenMain(argv[0], &generate);
}
