//===- Launcher.cpp - composer-train --nproc-per-node ---------------------===//

#include "Launcher.h"

#include "llvm/Support/raw_ostream.h"

#include <arpa/inet.h>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <map>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

extern char **environ;

namespace composer::train {

/// A port the kernel just gave out and took back; the store binds it a
/// moment later.
static int freePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  int port = 0;
  if (fd >= 0 &&
      bind(fd, reinterpret_cast<sockaddr *>(&address), length) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr *>(&address), &length) == 0)
    port = ntohs(address.sin_port);
  if (fd >= 0)
    close(fd);
  return port;
}

namespace {

/// SIGINT and SIGTERM received, by count, for the wait loop to pass on.
std::atomic<int> receivedInts{0}, receivedTerms{0};
static_assert(std::atomic<int>::is_always_lock_free,
              "the signal handler needs lock-free counters");

void onSignal(int signal) {
  (signal == SIGTERM ? receivedTerms : receivedInts).fetch_add(1);
}

/// The signal a rank says it stopped for after a batch (exit status 130
/// for SIGINT, 143 for SIGTERM), or 0.
int interruptOf(int code) {
  int signal = WIFEXITED(code) ? WEXITSTATUS(code) - 128 : 0;
  return signal == SIGINT || signal == SIGTERM ? signal : 0;
}

} // namespace

int launch(const LaunchOptions &options, char **argv) {
  llvm::raw_ostream &errs = llvm::errs();
  if (options.nprocPerNode < 1 || options.nnodes < 1 || options.nodeRank < 0 ||
      options.nodeRank >= options.nnodes) {
    errs << "composer-train: error: bad launch: --nproc-per-node "
         << options.nprocPerNode << ", --nnodes " << options.nnodes
         << ", --node-rank " << options.nodeRank << "\n";
    return 1;
  }
  int port = options.masterPort;
  if (port == 0 && options.nnodes > 1) {
    errs << "composer-train: error: --master-port is needed with --nnodes > "
            "1\n";
    return 1;
  }
  if (port == 0)
    port = freePort();
  int worldSize = options.nprocPerNode * options.nnodes;

  // Every SIGINT and SIGTERM is passed on to the ranks, which stop after a
  // batch on the first and at once on the second (Interrupt.h). They run in
  // process groups of their own, so that a terminal's Ctrl-C reaches them
  // through the launcher alone, and once.
  struct sigaction action = {};
  action.sa_handler = onSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  pid_t launcher = getpid();

  std::map<pid_t, int> running; // pid -> rank
  for (int local = 0; local < options.nprocPerNode; ++local) {
    int rank = options.nodeRank * options.nprocPerNode + local;
    std::vector<std::string> variables;
    for (char **entry = environ; *entry; ++entry)
      variables.push_back(*entry);
    for (auto [name, value] :
         {std::pair<std::string, std::string>{"RANK", std::to_string(rank)},
          {"LOCAL_RANK", std::to_string(local)},
          {"WORLD_SIZE", std::to_string(worldSize)},
          {"LOCAL_WORLD_SIZE", std::to_string(options.nprocPerNode)},
          {"MASTER_ADDR", options.masterAddr},
          {"MASTER_PORT", std::to_string(port)}})
      variables.push_back(name + "=" + value);
    std::vector<char *> env;
    for (std::string &variable : variables)
      env.push_back(variable.data());
    env.push_back(nullptr);
    pid_t pid = fork();
    if (pid == 0) {
      // A rank outliving its launcher (killed) stops as if interrupted.
      setpgid(0, 0);
      prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (getppid() != launcher)
        _exit(1);
      execve("/proc/self/exe", argv, env.data());
      _exit(127);
    }
    if (pid < 0) {
      errs << "composer-train: error: cannot start rank " << rank << "\n";
      for (auto [child, childRank] : running)
        kill(child, SIGKILL);
      return 1;
    }
    running[pid] = rank;
  }

  int status = 0;
  // The first signal passed on, or that a rank stopped for.
  int interrupt = 0;
  int forwardedInts = 0, forwardedTerms = 0;
  std::optional<std::chrono::steady_clock::time_point> deadline;
  auto forward = [&](const std::atomic<int> &received, int &forwarded,
                     int signal) {
    for (; forwarded < received.load(); ++forwarded) {
      for (auto [child, rank] : running)
        kill(child, signal);
      if (!interrupt)
        interrupt = signal;
    }
  };
  while (!running.empty()) {
    forward(receivedInts, forwardedInts, SIGINT);
    forward(receivedTerms, forwardedTerms, SIGTERM);
    int code = 0;
    pid_t pid = waitpid(-1, &code, WNOHANG);
    if (pid > 0) {
      int rank = running[pid];
      running.erase(pid);
      bool ok = WIFEXITED(code) && WEXITSTATUS(code) == 0;
      // Stopped as asked (here, or on another node: every rank stops at
      // the same batch), or killed by a second signal passed on.
      int signal = interruptOf(code);
      if (WIFSIGNALED(code) && ((WTERMSIG(code) == SIGINT && forwardedInts) ||
                                (WTERMSIG(code) == SIGTERM && forwardedTerms)))
        signal = WTERMSIG(code);
      if (signal) {
        ok = true;
        if (!interrupt)
          interrupt = signal;
      }
      if (!ok) {
        errs << "composer-train: rank " << rank << " (pid " << pid << ") ";
        if (WIFSIGNALED(code))
          errs << "was killed by signal " << WTERMSIG(code) << "\n";
        else
          errs << "exited with status " << WEXITSTATUS(code) << "\n";
        status = 1;
        if (!deadline)
          deadline = std::chrono::steady_clock::now() +
                     std::chrono::seconds(options.graceSeconds);
      }
      continue;
    }
    if (deadline && std::chrono::steady_clock::now() > *deadline) {
      for (auto [child, rank] : running) {
        errs << "composer-train: stopping rank " << rank << " (pid " << child
             << ")\n";
        kill(child, SIGKILL);
      }
      deadline = std::chrono::steady_clock::now() + std::chrono::hours(1);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (status == 0 && interrupt)
    return 128 + interrupt;
  return status;
}

} // namespace composer::train
