//===- refine-model.cpp - composer-opt as a C++ library -------------------===//
//
// Usage: refine-model IN.pt INPUT-SPEC OUT.pt
// Loads IN.pt, refines its tensor shapes from INPUT-SPEC (e.g.
// 1x3x224x224xf32), prints the output type of forward, and saves OUT.pt.
//
//===----------------------------------------------------------------------===//

#include "composer/API.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  if (argc != 4) {
    llvm::errs() << "usage: refine-model IN.pt INPUT-SPEC OUT.pt\n";
    return 2;
  }
  llvm::Expected<composer::Model> model = composer::Model::load(argv[1]);
  if (!model) {
    llvm::errs() << llvm::toString(model.takeError());
    return 1;
  }
  std::string pipeline = std::string("builtin.module(composer-refine-types{"
                                     "input-specs=") +
                         argv[2] + "})";
  if (llvm::Error error = model->runPipeline(pipeline)) {
    llvm::errs() << llvm::toString(std::move(error));
    return 1;
  }
  auto forward = model->getModule().lookupSymbol<mlir::func::FuncOp>("forward");
  llvm::outs() << "forward returns " << forward.getResultTypes()[0] << "\n";
  if (llvm::Error error = model->save(argv[3])) {
    llvm::errs() << llvm::toString(std::move(error));
    return 1;
  }
  return 0;
}
