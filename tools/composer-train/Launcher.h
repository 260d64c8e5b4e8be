//===- Launcher.h - composer-train --nproc-per-node -------------*- C++ -*-===//
#ifndef COMPOSER_TRAIN_LAUNCHER_H
#define COMPOSER_TRAIN_LAUNCHER_H

#include <string>

namespace composer::train {

struct LaunchOptions {
  int nprocPerNode = 1;
  int nnodes = 1;
  int nodeRank = 0;
  std::string masterAddr = "127.0.0.1";
  /// 0: pick a free port (one node only).
  int masterPort = 0;
  /// How long the others may take to stop after one process failed.
  int graceSeconds = 60;
};

/// Starts this program's `argv` once per local rank with torchrun's
/// environment (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR,
/// MASTER_PORT), waits for all, and returns the exit status: 0 if every
/// process succeeded. A process that fails gets the others a grace period
/// to stop by themselves, then they are killed. SIGINT and SIGTERM are
/// passed on to the processes (each in a process group of its own, and
/// sent SIGTERM if the launcher dies); when they stopped for one, the
/// status is 130 (SIGINT) or 143 (SIGTERM).
int launch(const LaunchOptions &options, char **argv);

} // namespace composer::train

#endif // COMPOSER_TRAIN_LAUNCHER_H
