//===- torch-load-save.cpp - the baseline for bench/roundtrip.py ----------===//
//
// Bare torch::jit::load + save of a model: what composer-opt's empty
// pipeline is compared against. A measuring tool, not part of the compiler.
//
//===----------------------------------------------------------------------===//

#include <torch/script.h>

#include <iostream>

int main(int argc, char **argv) {
  if (argc != 3) {
    std::cerr << "usage: torch-load-save IN.pt OUT.pt\n";
    return 2;
  }
  try {
    torch::jit::load(argv[1]).save(argv[2]);
  } catch (const std::exception &e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  return 0;
}
