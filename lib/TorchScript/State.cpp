//===- State.cpp - parameters and buffers on export -----------------------===//

#include "State.h"
#include "Conversion.h"
#include "StateInitializer.h"

#include "composer/Support/StatePaths.h"

#include "mlir/IR/Diagnostics.h"

#include <ATen/ATen.h>

#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"

#include <unistd.h>

using namespace mlir;
using namespace composer;
namespace jit = torch::jit;

namespace {

class StateSync {
public:
  explicit StateSync(jit::Module &model) : model(model), initializers(model) {}

  LogicalResult declare(Operation *decl, StringRef key, bool isParameter,
                        bool frozen, bool channelsLast, Attribute initializer,
                        Type type);

private:
  FailureOr<jit::Module> ownModule(StringRef path, Location loc);
  jit::Module unshare(jit::Module &parent, const std::string &name);

  jit::Module &model;
  /// Modules on paths already given their own type, by path.
  llvm::StringMap<jit::Module> owned;
  /// What the string initializers of this export share.
  InitializerContext initializers;
  /// Bytes of the new parameters and buffers so far.
  uint64_t newStateBytes = 0;
};

/// Physical memory: new state beyond it would end in the OOM killer.
uint64_t getPhysicalMemoryBytes() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long pageSize = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || pageSize <= 0)
    return UINT64_MAX;
  return uint64_t(pages) * uint64_t(pageSize);
}

/// Checks that a new `declared` tensor fits in memory with the `total`
/// bytes of new state before it (a pass option of 10^12 channels gives a
/// valid IR shape no machine can hold), and adds it to `total`.
LogicalResult reserveNewState(StringRef key, TorchTensorType declared,
                              c10::ScalarType dtype, uint64_t &total,
                              Location loc) {
  uint64_t bytes = c10::elementSize(dtype);
  // Saturating steps each reset their flag.
  bool overflow = false, stepOverflow = false;
  for (int64_t size : declared.getSizes()) {
    bytes = llvm::SaturatingMultiply(bytes, uint64_t(size), &stepOverflow);
    overflow |= stepOverflow;
  }
  uint64_t before = total;
  total = llvm::SaturatingAdd(before, bytes, &stepOverflow);
  overflow |= stepOverflow;
  uint64_t memory = getPhysicalMemoryBytes();
  if (!overflow && total <= memory)
    return success();
  auto gigabytes = [](uint64_t n) {
    std::string text;
    llvm::raw_string_ostream(text) << llvm::format("%.3g GB", n / 1e9);
    return text;
  };
  InFlightDiagnostic diag = emitError(loc, "new '")
                            << key << "' " << declared << " needs ";
  if (overflow)
    diag << "more bytes than 64 bits count";
  else
    diag << gigabytes(bytes);
  if (before)
    diag << " besides the " << gigabytes(before) << " of new state before it";
  diag << ", more than this machine's memory (" << gigabytes(memory) << ")";
  return diag;
}

/// A copy of `old` with a class type of its own: same attributes (the same
/// objects and tensors), constants and methods.
jit::Module cloneInstanceWithOwnType(const jit::Module &old) {
  c10::ClassTypePtr oldType = old.type();
  jit::Module fresh(*oldType->name(), old._ivalue()->compilation_unit(),
                    /*shouldMangle=*/true);
  for (size_t i = 0; i < oldType->numAttributes(); ++i)
    fresh.register_attribute(oldType->getAttributeName(i),
                             oldType->getAttribute(i),
                             old._ivalue()->getSlot(i),
                             oldType->is_parameter(i), oldType->is_buffer(i));
  for (const std::string &name : oldType->constantNames())
    fresh.type()->addConstant(name, oldType->getConstant(name));
  for (jit::Function *method : oldType->methods())
    fresh.clone_method(old, method->name());
  return fresh;
}

jit::Module StateSync::unshare(jit::Module &parent, const std::string &name) {
  jit::Module fresh = cloneInstanceWithOwnType(parent.attr(name).toModule());
  parent.type()->unsafeChangeAttributeType(name, fresh.type());
  parent._ivalue()->setAttr(name, fresh._ivalue());
  return fresh;
}

// The root is the export's own clone; every module below it on `path` is
// given its own type, or created empty if it does not exist.
FailureOr<jit::Module> StateSync::ownModule(StringRef path, Location loc) {
  if (path.empty())
    return model;
  auto it = owned.find(path);
  if (it != owned.end())
    return it->second;
  auto [parentPath, name] = splitAttrPath(path);
  FailureOr<jit::Module> parent = ownModule(parentPath, loc);
  if (failed(parent))
    return failure();
  std::string attr = name.str();
  jit::Module child;
  if (!parent->hasattr(attr)) {
    child = jit::Module(c10::QualifiedName("__torch__.composer.Container"),
                        model._ivalue()->compilation_unit(),
                        /*shouldMangle=*/true);
    child.register_attribute("training", c10::BoolType::get(),
                             parent->is_training());
    parent->register_module(attr, child);
  } else if (parent->attr(attr).isModule()) {
    child = unshare(*parent, attr);
  } else {
    return emitError(loc, "cannot add state under '")
           << path << "': it is an attribute, not a submodule";
  }
  return owned[path] = child;
}

/// The tensor in channels_last memory format if its declaration asks for it,
/// back in the default format if it no longer does; otherwise (other
/// layouts included) the same tensor.
at::Tensor inMemoryFormat(const at::Tensor &tensor, bool channelsLast) {
  bool isChannelsLast = tensor.dim() == 4 && !tensor.is_contiguous() &&
                        tensor.is_contiguous(at::MemoryFormat::ChannelsLast);
  if (tensor.dim() != 4 || channelsLast == isChannelsLast ||
      (!channelsLast && !isChannelsLast))
    return tensor;
  at::MemoryFormat format = channelsLast ? at::MemoryFormat::ChannelsLast
                                         : at::MemoryFormat::Contiguous;
  at::Tensor converted = tensor.detach().contiguous(format);
  converted.set_requires_grad(tensor.requires_grad());
  return converted;
}

/// The registered initializer `initializer` is of, and its argument; a
/// diagnostic at `loc` listing the registered ones if there is none.
FailureOr<std::pair<const StateInitializer *, StringRef>>
lookupInitializer(StringRef key, StringAttr initializer, Location loc) {
  StringRef argument;
  if (const StateInitializer *found =
          lookupStateInitializer(initializer.getValue(), argument))
    return std::make_pair(found, argument);
  InFlightDiagnostic diag = emitError(loc, "'")
                            << key << "': unknown initializer " << initializer
                            << " (known:";
  for (const StateInitializer *known : getStateInitializers())
    diag << " \"" << known->getSyntax() << "\"";
  return diag << ")";
}

/// Checks state the model has against its string initializer: what a pass
/// assumed the tensor holds (StateInitializer::check). A kind no
/// initializer is registered for says nothing of existing state.
LogicalResult checkExistingState(StringRef key, const at::Tensor &tensor,
                                 Attribute initializer,
                                 TorchTensorType declared,
                                 InitializerContext &context, Location loc) {
  auto kind = dyn_cast_or_null<StringAttr>(initializer);
  StringRef argument;
  const StateInitializer *found =
      kind ? lookupStateInitializer(kind.getValue(), argument) : nullptr;
  if (!found)
    return success();
  std::optional<c10::ScalarType> dtype = exportDtype(declared.getDtype());
  if (!dtype)
    return emitError(loc, "'") << key << "' has no tensor dtype";
  return found->check(StateRequest{key, argument, declared, *dtype, loc},
                      tensor, context);
}

/// The tensor a new parameter or buffer starts as: a dense initializer
/// broadcast to the declared shape (a 1x1x3x3 blur filter for a Cx1x3x3
/// buffer, say), or what a registered string initializer materializes
/// (StateInitializer.h).
FailureOr<at::Tensor> materializeInitializer(StringRef key,
                                             Attribute initializer,
                                             TorchTensorType declared,
                                             InitializerContext &context,
                                             Location loc) {
  std::vector<int64_t> shape = declared.getSizes().vec();
  std::optional<c10::ScalarType> dtype = exportDtype(declared.getDtype());
  if (!dtype)
    return emitError(loc, "'") << key << "' has no tensor dtype";
  if (auto kind = dyn_cast_or_null<StringAttr>(initializer)) {
    auto found = lookupInitializer(key, kind, loc);
    if (failed(found))
      return failure();
    auto [stateInitializer, argument] = *found;
    return stateInitializer->materialize(
        StateRequest{key, argument, declared, *dtype, loc}, context);
  }
  auto elements = dyn_cast_or_null<DenseElementsAttr>(initializer);
  if (!elements)
    return emitError(loc, "'")
           << key << "' is not in the model and has no initializer";
  std::string error;
  std::optional<c10::IValue> tensor =
      exportConstant(elements, c10::TensorType::get(), error);
  if (!tensor)
    return emitError(loc, "initializer of '") << key << "': " << error;
  at::Tensor value = tensor->toTensor();
  if (!at::is_expandable_to(value.sizes(), shape))
    return emitError(loc, "initializer of '")
           << key << "' does not broadcast to the declared shape " << declared;
  return value.expand(shape).contiguous();
}

LogicalResult StateSync::declare(Operation *decl, StringRef key,
                                 bool isParameter, bool frozen,
                                 bool channelsLast, Attribute initializer,
                                 Type type) {
  Location loc = decl->getLoc();
  auto [modulePath, name] = splitAttrPath(key);
  // Existing state: only requires_grad can change.
  jit::Module owner = model;
  bool exists = true;
  SmallVector<StringRef> parts;
  modulePath.split(parts, '.');
  for (StringRef part : modulePath.empty() ? ArrayRef<StringRef>() : parts) {
    if (!owner.hasattr(part.str()) || !owner.attr(part.str()).isModule()) {
      exists = false;
      break;
    }
    owner = owner.attr(part.str()).toModule();
  }
  if (exists && owner.hasattr(name.str())) {
    c10::IValue value = owner.attr(name.str());
    if (!value.isTensor())
      return emitError(loc, "'") << key << "' is not a tensor in the model";
    if (failed(checkExistingState(key, value.toTensor(), initializer,
                                  cast<TorchTensorType>(type), initializers,
                                  loc)))
      return failure();
    at::Tensor tensor = value.toTensor();
    // A new tensor on the same storage: the module exported from, which
    // shares this one's tensors, keeps its own flag.
    if (isParameter && tensor.requires_grad() == frozen)
      tensor = tensor.detach().requires_grad_(!frozen);
    at::Tensor formatted = inMemoryFormat(tensor, channelsLast);
    if (!formatted.is_same(value.toTensor()))
      owner.setattr(name.str(), formatted);
    return success();
  }

  std::optional<c10::ScalarType> dtype =
      exportDtype(cast<TorchTensorType>(type).getDtype());
  if (dtype && failed(reserveNewState(key, cast<TorchTensorType>(type), *dtype,
                                      newStateBytes, loc)))
    return failure();
  FailureOr<at::Tensor> initial = materializeInitializer(
      key, initializer, cast<TorchTensorType>(type), initializers, loc);
  if (failed(initial))
    return failure();
  at::Tensor value = inMemoryFormat(*initial, channelsLast);
  FailureOr<jit::Module> parent = ownModule(modulePath, loc);
  if (failed(parent))
    return failure();
  if (isParameter)
    parent->register_parameter(name.str(), value.set_requires_grad(!frozen),
                               /*is_buffer=*/false);
  else
    parent->register_buffer(name.str(), value);
  return success();
}

} // namespace

/// Records the layer order and frozen count composer-freeze-layers chose
/// as attributes of the root module, for a runtime that moves the frontier.
void exportLayerMetadata(ModuleOp module, jit::Module &model) {
  auto layers = module->getAttrOfType<ArrayAttr>("composer.layers");
  auto frozen = module->getAttrOfType<IntegerAttr>("composer.frozen_layers");
  if (!layers || !frozen)
    return;
  c10::List<std::string> names;
  for (Attribute layer : layers)
    names.push_back(cast<StringAttr>(layer).str());
  auto setOrRegister = [&](const std::string &name, c10::TypePtr type,
                           c10::IValue value) {
    if (model.hasattr(name))
      model.setattr(name, std::move(value));
    else
      model.register_attribute(name, type, std::move(value));
  };
  setOrRegister(std::string(kLayersAttrName), c10::ListType::ofStrings(),
                names);
  setOrRegister(std::string(kFrozenLayersAttrName), c10::IntType::get(),
                frozen.getInt());
}

LogicalResult composer::syncModelState(ModuleOp module, jit::Module &model) {
  exportLayerMetadata(module, model);
  StateSync sync(model);
  for (Operation &op : module.getBody()->getOperations()) {
    LogicalResult result = success();
    if (auto param = dyn_cast<ParameterOp>(op))
      result = sync.declare(param, param.getSymName(), /*isParameter=*/true,
                            param.getFrozen(), param.getChannelsLast(),
                            param.getInitializerAttr(), param.getType());
    else if (auto buffer = dyn_cast<BufferOp>(op))
      result = sync.declare(buffer, buffer.getSymName(),
                            /*isParameter=*/false, /*frozen=*/false,
                            buffer.getChannelsLast(),
                            buffer.getInitializerAttr(), buffer.getType());
    if (failed(result))
      return failure();
  }
  return success();
}
