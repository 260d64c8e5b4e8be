//===- TokenFile.cpp - Token stream datasets ------------------------------===//
//
// A flat file of little-endian uint16 tokens cut into fixed-length samples.
// Inputs and targets are two views of one int64 buffer, offset by a token, so
// the stream costs its size once.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Data.h"

#include <cstring>
#include <fstream>
#include <stdexcept>

namespace composer::runtime {

Dataset loadTokenFile(const std::string &path, int64_t sequenceLength) {
  if (sequenceLength <= 0)
    throw std::invalid_argument(path +
                                ": sequence length must be positive, "
                                "got " +
                                std::to_string(sequenceLength));
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in)
    throw std::runtime_error(path + ": cannot open file");
  auto bytes = static_cast<int64_t>(in.tellg());
  if (bytes < 0)
    throw std::runtime_error(path + ": cannot determine the file size");
  if (bytes % 2 != 0)
    throw std::runtime_error(path + ": odd size " + std::to_string(bytes) +
                             " bytes, expected uint16 tokens");
  int64_t numTokens = bytes / 2;
  if (numTokens < sequenceLength + 1)
    throw std::runtime_error(
        path + ": too short: " + std::to_string(numTokens) +
        " tokens, expected at least " + std::to_string(sequenceLength + 1) +
        " for one sample of " + std::to_string(sequenceLength));

  int64_t numSamples = (numTokens - 1) / sequenceLength;
  int64_t used = numSamples * sequenceLength + 1;
  std::vector<unsigned char> raw(static_cast<size_t>(used) * 2);
  in.seekg(0);
  if (!in.read(reinterpret_cast<char *>(raw.data()),
               static_cast<std::streamsize>(raw.size())))
    throw std::runtime_error(path + ": read error");

  // Assemble each token from its bytes: correct on any host byte order.
  torch::Tensor stream = torch::empty({used}, torch::kLong);
  int64_t *out = stream.data_ptr<int64_t>();
  for (int64_t i = 0; i < used; ++i)
    out[i] = int64_t(raw[2 * i]) | (int64_t(raw[2 * i + 1]) << 8);

  Dataset dataset;
  int64_t n = numSamples * sequenceLength;
  dataset.inputs = stream.narrow(0, 0, n).view({numSamples, sequenceLength});
  dataset.targets = stream.narrow(0, 1, n).view({numSamples, sequenceLength});
  dataset.tokensPerSample = sequenceLength;
  return dataset;
}

} // namespace composer::runtime
