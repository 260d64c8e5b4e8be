//===- TestFiles.h - Temporary directories and files for runtime tests ----===//

#ifndef COMPOSER_UNITTESTS_RUNTIME_TESTFILES_H
#define COMPOSER_UNITTESTS_RUNTIME_TESTFILES_H

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>

namespace composer::runtime::testutils {

/// A fresh directory under the tests' temporary directory, ending in '/', so
/// that tests running side by side never share a file.
inline std::string makeTempDir(const std::string &prefix) {
  std::string pattern = ::testing::TempDir() + prefix + "-XXXXXX";
  if (!mkdtemp(pattern.data()))
    throw std::runtime_error("mkdtemp failed for " + pattern);
  return pattern + "/";
}

/// Writes `bytes` to `path`, replacing it; a failure fails the test.
inline void writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

} // namespace composer::runtime::testutils

#endif // COMPOSER_UNITTESTS_RUNTIME_TESTFILES_H
