//===- StateInitializer.h - named initializers of model state ---*- C++ -*-===//
//
// A parameter or buffer declaration may name its initializer as a string,
// "<kind>" or "<kind>:<argument>" (composer/Support/StatePaths.h). On new
// state, export materializes the tensor the initializer describes; on state
// the model already has, it checks that the tensor holds what a pass assumed.
// Each kind belongs to the method that writes it and is registered from that
// method's file under initializers/; the exporter knows kinds only through
// this registry.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_LIB_TORCHSCRIPT_STATEINITIALIZER_H
#define COMPOSER_LIB_TORCHSCRIPT_STATEINITIALIZER_H

#include "composer/Dialect/Composer.h"

#include "mlir/IR/Location.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringRef.h"

#include <ATen/ATen.h>
#include <torch/csrc/jit/api/module.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace composer {

/// One parameter or buffer an initializer materializes or checks.
struct StateRequest {
  /// Its state_dict key.
  llvm::StringRef key;
  /// The text after "<kind>:"; empty for an initializer without argument.
  llvm::StringRef argument;
  /// Its declared type: exact shape and dtype.
  TorchTensorType declared;
  /// The declared dtype as LibTorch's.
  c10::ScalarType dtype;
  /// The declaration's location, where diagnostics go.
  mlir::Location loc;
};

/// What the initializers of one export share: the model being exported and
/// data an initializer keeps between the tensors it makes (the SVDs that
/// several factors are sliced from). One per export: nothing outlives it.
class InitializerContext {
public:
  explicit InitializerContext(torch::jit::Module &model) : model(model) {}

  /// The export's model, with the state declared before the current one.
  torch::jit::Module &getModel() const { return model; }

  /// The tensor at state_dict `key` in the model, if there is one.
  std::optional<at::Tensor> lookupTensor(llvm::StringRef key) const;

  /// The export's data of type T, value-initialized on first use. Keyed by
  /// T: initializers that name the same T share it.
  template <typename T> T &getData() {
    std::unique_ptr<DataBase> &slot = data[getTag<T>()];
    if (!slot)
      slot = std::make_unique<Data<T>>();
    return static_cast<Data<T> &>(*slot).value;
  }

private:
  struct DataBase {
    virtual ~DataBase() = default;
  };
  template <typename T> struct Data final : DataBase { T value{}; };
  /// An address unique to T.
  template <typename T> static const void *getTag() {
    static const char tag = 0;
    return &tag;
  }

  torch::jit::Module &model;
  llvm::DenseMap<const void *, std::unique_ptr<DataBase>> data;
};

/// A kind of string initializer. Instances live in the registry from their
/// registration until the library is unloaded, and are stateless: what one
/// export needs between calls goes in its InitializerContext.
class StateInitializer {
public:
  /// Whether "<kind>:<argument>" is written with an argument; an
  /// initializer written otherwise is not of this kind.
  enum class Argument { None, Optional, Required };

  /// `kind` and `argumentName` (what the argument is, for diagnostics:
  /// "key" for "svd_first:<key>") are static strings.
  StateInitializer(llvm::StringRef kind, Argument argument,
                   llvm::StringRef argumentName = "")
      : kind(kind), argument(argument), argumentName(argumentName) {}
  virtual ~StateInitializer();

  llvm::StringRef getKind() const { return kind; }
  Argument getArgument() const { return argument; }
  /// How it is written: "zeros", "svd_first:<key>",
  /// "linear_default[:<fan_in>]".
  std::string getSyntax() const;

  /// The tensor new state starts as, of the declared shape and dtype; or a
  /// diagnostic at `request.loc`. By default, an error: the kind only
  /// describes state the model has.
  virtual mlir::FailureOr<at::Tensor>
  materialize(const StateRequest &request, InitializerContext &context) const;

  /// Checks that `tensor`, the model's own, holds what the initializer
  /// says, which a pass relied on when it rewrote the graph; a diagnostic
  /// at `request.loc` if not. By default, any tensor does.
  virtual mlir::LogicalResult check(const StateRequest &request,
                                    const at::Tensor &tensor,
                                    InitializerContext &context) const;

private:
  llvm::StringRef kind;
  Argument argument;
  llvm::StringRef argumentName;
};

/// Adds `initializer` to the registry. Its kind must be new.
void registerStateInitializer(std::unique_ptr<StateInitializer> initializer);

/// The registered initializer `initializer` (a whole "<kind>[:<argument>]"
/// string) is of, with its argument; null if no kind matches it (unknown
/// kind, or an argument where its kind takes none or none where it needs
/// one).
const StateInitializer *lookupStateInitializer(llvm::StringRef initializer,
                                               llvm::StringRef &argument);

/// Every registered initializer, by kind.
std::vector<const StateInitializer *> getStateInitializers();

/// Registers initializers when the library is loaded, as a namespace-scope
/// object in the file that defines them. Those files are sources of the
/// shared library itself, so the linker keeps every one.
struct StateInitializerRegistration {
  template <typename... Initializers>
  explicit StateInitializerRegistration(
      std::unique_ptr<Initializers>... initializers) {
    (registerStateInitializer(std::move(initializers)), ...);
  }
};

} // namespace composer

#endif // COMPOSER_LIB_TORCHSCRIPT_STATEINITIALIZER_H
