//===- MergeIndex.cpp - composer-data merge-index -------------------------===//

#include "MergeIndex.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <unistd.h>

namespace fs = std::filesystem;
using nlohmann::json;

namespace composer::data {

int mergeIndex(const std::vector<std::string> &args) {
  if (args.size() != 1)
    throw std::invalid_argument("merge-index takes ROOT");
  const fs::path root = args[0];
  std::error_code ec;
  if (!fs::is_directory(root, ec))
    throw std::runtime_error(root.string() + ": not a directory");
  std::vector<fs::path> parts;
  for (const auto &entry : fs::directory_iterator(root, ec))
    if (entry.is_directory() && fs::exists(entry.path() / "index.json"))
      parts.push_back(entry.path());
  std::sort(parts.begin(), parts.end());
  if (parts.empty())
    throw std::runtime_error(root.string() +
                             ": no subdirectory holds an index.json");
  json shards = json::array();
  for (const fs::path &part : parts) {
    const std::string path = (part / "index.json").string();
    std::ifstream in(path);
    json index = json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (index.is_discarded() || !index.is_object() ||
        !index.contains("shards") || !index["shards"].is_array())
      throw std::runtime_error(path + ": not an MDS index (a JSON object "
                                      "with a 'shards' list)");
    if (index.value("version", 0) != 2)
      throw std::runtime_error(path + ": unsupported index version, expected "
                                      "2");
    for (json &shard : index["shards"]) {
      for (const char *key : {"raw_data", "zip_data", "raw_meta", "zip_meta"})
        if (shard.contains(key) && shard[key].is_object() &&
            shard[key].contains("basename") &&
            shard[key]["basename"].is_string())
          shard[key]["basename"] = part.filename().string() + "/" +
                                   shard[key]["basename"].get<std::string>();
      shards.push_back(std::move(shard));
    }
  }
  json merged = {{"version", 2}, {"shards", std::move(shards)}};
  const fs::path out = root / "index.json";
  const fs::path temporary =
      root / (".index.json.tmp-" + std::to_string(::getpid()));
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    file << merged.dump();
    if (!file.flush()) {
      fs::remove(temporary, ec);
      throw std::runtime_error(out.string() + ": cannot write");
    }
  }
  fs::rename(temporary, out, ec);
  if (ec) {
    fs::remove(temporary, ec);
    throw std::runtime_error(out.string() + ": cannot write: " + ec.message());
  }
  std::cout << "merged " << parts.size() << " indexes ("
            << merged["shards"].size() << " shards) into " << out.string()
            << "\n";
  return 0;
}

} // namespace composer::data
