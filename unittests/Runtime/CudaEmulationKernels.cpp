//===- CudaEmulationKernels.cpp - the CUDA kernels, built for the host ----===//
//
// runtime/ops/cuda's kernels as C++, their launches run by CudaEmulation.h,
// for OpsCudaEmulationTest on machines without a GPU.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_CUDA_EMULATION
#define COMPOSER_CUDA_EMULATION
#endif
#include "CudaEmulation.h"

// Every kernel file, from the list the CUDA build reads.
#include "../../runtime/ops/cuda/KernelSources.inc"

// The CUDA runtime's, for CudaKernels.cpp's messages; no libcudart needed.
const char *cudaGetErrorString(cudaError_t error) {
  return error == cudaSuccess ? "no error" : "CUDA error (emulated launch)";
}
