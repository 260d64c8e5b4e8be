//===- Import.cpp - TorchScript module -> composer dialect ----------------===//
//
// Inlines `forward`, declares every parameter and buffer as a symbol named by
// its state_dict key, resolves attribute chains on `self` to those symbols,
// and maps each node to a typed op when its schema has one (and the
// arguments the op keeps as attributes are constants), otherwise to a
// generic `composer.op`. Control flow becomes composer.if / composer.loop.
//
//===----------------------------------------------------------------------===//

#include "Import.h"
#include "Conversion.h"
#include "composer/TorchScript/TorchScript.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/FileSystem.h"

#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/runtime/graph_executor.h>

using namespace mlir;
using namespace composer;
namespace jit = torch::jit;

namespace {

/// What a value of module type stands for: the attribute path from `self`.
struct ModuleRef {
  std::string path;
  jit::Module module;
};

class Importer {
public:
  Importer(MLIRContext *ctx, const jit::Module &model, uint64_t maxOps)
      : ctx(ctx), model(model), maxOps(maxOps), fileLoc(UnknownLoc::get(ctx)),
        builder(ctx) {
    for (RegisteredOperationName name : ctx->getRegisteredOperations()) {
      auto *schemaOp = name.getInterface<TorchSchemaOp>();
      if (!schemaOp)
        continue;
      typedOps.insert({schemaOp->getTorchSchema(), TypedOp{name, false}});
      StringRef inplace = schemaOp->getInplaceTorchSchema();
      if (!inplace.empty())
        typedOps.insert({inplace, TypedOp{name, true}});
    }
  }

  OwningOpRef<ModuleOp> run(StringRef sourcePath);

private:
  LogicalResult declareState(ModuleOp module);
  LogicalResult importBlock(jit::Block *block);
  LogicalResult importNode(jit::Node *node);
  LogicalResult importGetAttr(jit::Node *node, Location loc);
  LogicalResult importSetAttr(jit::Node *node, Location loc);
  LogicalResult importIf(jit::Node *node, Location loc);
  LogicalResult importLoop(jit::Node *node, Location loc);
  Operation *tryImportTyped(jit::Node *node, Location loc);
  Operation *importGeneric(jit::Node *node, Location loc);

  SmallVector<Type> resultTypes(jit::Node *node);
  FailureOr<SmallVector<Value>> lookup(at::ArrayRef<jit::Value *> values,
                                       Location loc);
  void bindResults(jit::Node *node, Operation *op);
  std::optional<c10::IValue> constantValue(jit::Value *value);
  Attribute nodeAttribute(jit::Node *node, jit::Symbol name,
                          std::string &error);

  MLIRContext *ctx;
  const jit::Module &model;
  uint64_t maxOps;
  Location fileLoc;
  OpBuilder builder;
  /// Typed op for each schema key, and whether the key is its in-place one.
  struct TypedOp {
    OperationName name;
    bool inplace;
  };
  llvm::StringMap<TypedOp> typedOps;
  llvm::DenseMap<jit::Value *, Value> values;
  llvm::DenseMap<jit::Value *, ModuleRef> modules;
  /// Tied state: a name whose tensor is another's (a head sharing its
  /// embedding's weight), mapped to the first name declared for it. One
  /// declaration per tensor, so that passes see every read of it.
  llvm::StringMap<std::string> tiedTo;
};

/// Nodes in `block` and the blocks nested in its nodes.
uint64_t countNodes(jit::Block *block) {
  uint64_t count = 0;
  for (jit::Node *node : block->nodes()) {
    ++count;
    for (jit::Block *nested : node->blocks())
      count += countNodes(nested);
  }
  return count;
}

/// Calls (prim::CallMethod, prim::CallFunction) in `block` and the blocks
/// nested in its nodes.
uint64_t countCalls(jit::Block *block) {
  uint64_t count = 0;
  for (jit::Node *node : block->nodes()) {
    if (node->kind() == jit::prim::CallMethod ||
        node->kind() == jit::prim::CallFunction)
      ++count;
    for (jit::Block *nested : node->blocks())
      count += countCalls(nested);
  }
  return count;
}

/// Inlines every call in `graph` that can be. jit::Inline splices in each
/// callee's optimized graph, which LibTorch inlines only while the graph
/// executor optimizes and then keeps: a callee first compiled with it off
/// (torch._C._set_graph_executor_optimize(False), composer-train's
/// default) brings its own calls along, so inline until none are left.
/// A round may bring in more calls than it removes (a callee that calls two
/// helpers); only a round that changes nothing leaves calls of functions
/// without a graph. Rounds are bounded: TorchScript has no recursion, but a
/// malformed graph must not hang the import.
void inlineCalls(jit::Graph &graph) {
  jit::GraphOptimizerEnabledGuard optimize(true);
  constexpr int kMaxRounds = 64;
  for (int round = 0; round < kMaxRounds; ++round) {
    uint64_t calls = countCalls(graph.block());
    if (calls == 0)
      return;
    uint64_t nodes = countNodes(graph.block());
    jit::Inline(graph);
    if (countCalls(graph.block()) == calls &&
        countNodes(graph.block()) == nodes)
      return; // Calls of functions without a graph stay.
  }
}

std::string joinPath(StringRef prefix, StringRef name) {
  return prefix.empty() ? name.str() : (prefix + "." + name).str();
}

LogicalResult Importer::declareState(ModuleOp module) {
  builder.setInsertionPointToEnd(module.getBody());
  Location loc = module.getLoc();
  llvm::DenseMap<c10::TensorImpl *, std::string> declared;
  auto declare = [&](const std::string &name, const at::Tensor &tensor,
                     bool isParameter) -> LogicalResult {
    auto [first, inserted] =
        declared.try_emplace(tensor.unsafeGetTensorImpl(), name);
    if (!inserted) {
      tiedTo[name] = first->second;
      return success();
    }
    Type dtype = importDtype(tensor.scalar_type(), ctx);
    if (!dtype)
      return emitError(loc, "'") << name << "' has unsupported dtype "
                                 << c10::toString(tensor.scalar_type());
    auto type = TypeAttr::get(
        TorchTensorType::get(ctx, true, tensor.sizes().vec(), dtype));
    auto nameAttr = builder.getStringAttr(name);
    auto flag = [&](bool set) {
      return set ? builder.getUnitAttr() : UnitAttr();
    };
    bool channelsLast = tensor.dim() == 4 && !tensor.is_contiguous() &&
                        tensor.is_contiguous(at::MemoryFormat::ChannelsLast);
    if (isParameter)
      builder.create<ParameterOp>(loc, nameAttr, type,
                                  /*frozen=*/flag(!tensor.requires_grad()),
                                  flag(channelsLast),
                                  /*initializer=*/Attribute());
    else
      builder.create<BufferOp>(loc, nameAttr, type, /*frozen=*/UnitAttr(),
                               flag(channelsLast), /*initializer=*/Attribute());
    return success();
  };
  for (const auto &param : model.named_parameters(/*recurse=*/true))
    if (failed(declare(param.name, param.value, true)))
      return failure();
  for (const auto &buffer : model.named_buffers(/*recurse=*/true))
    if (failed(declare(buffer.name, buffer.value, false)))
      return failure();
  return success();
}

OwningOpRef<ModuleOp> Importer::run(StringRef sourcePath) {
  fileLoc = FileLineColLoc::get(ctx, sourcePath, 0, 0);
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  SmallString<256> absolutePath(sourcePath);
  llvm::sys::fs::make_absolute(absolutePath);
  (*module)->setAttr(kSourceModelAttrName,
                     builder.getStringAttr(absolutePath.str()));
  if (failed(declareState(*module)))
    return nullptr;

  auto forward = model.find_method("forward");
  if (!forward) {
    InFlightDiagnostic diag =
        emitError(fileLoc, "the model has no forward method");
    // Scripting an overloaded forward (nn.LSTM's) compiles one method per
    // overload instead.
    if (model.find_method("forward__0"))
      diag << ": its forward is overloaded (forward__0, ...); script a "
              "module whose forward calls it";
    return nullptr;
  }
  std::shared_ptr<jit::Graph> graph = forward->graph()->copy();
  inlineCalls(*graph);
  uint64_t numNodes = countNodes(graph->block());
  if (numNodes > maxOps) {
    emitError(fileLoc, "forward has ")
        << numNodes << " nodes after inlining, more than the limit of "
        << maxOps << " operations (composer-opt --max-ops)";
    return nullptr;
  }
  // Decide what inlined callees test on constants (F.max_pool2d's `stride is
  // None`), so that their nodes' arguments are constants typed ops take.
  jit::ConstantPropagationImmutableTypes(graph);

  // The first input is `self`; the others become @forward's arguments.
  SmallVector<Type> argTypes;
  for (jit::Value *input : graph->inputs().slice(1))
    argTypes.push_back(importType(input->type(), ctx));
  SmallVector<Type> resultTypes;
  for (jit::Value *output : graph->outputs())
    resultTypes.push_back(importType(output->type(), ctx));

  builder.setInsertionPointToEnd(module->getBody());
  auto func = builder.create<func::FuncOp>(
      fileLoc, "forward", builder.getFunctionType(argTypes, resultTypes));
  Block *entry = func.addEntryBlock();
  modules[graph->inputs()[0]] = ModuleRef{"", model};
  for (auto [input, arg] :
       llvm::zip(graph->inputs().slice(1), entry->getArguments())) {
    values[input] = arg;
    if (input->hasDebugName())
      func.setArgAttr(arg.getArgNumber(), "composer.name",
                      builder.getStringAttr(input->debugNameBase()));
  }

  builder.setInsertionPointToEnd(entry);
  if (failed(importBlock(graph->block())))
    return nullptr;
  FailureOr<SmallVector<Value>> outputs = lookup(graph->outputs(), fileLoc);
  if (failed(outputs))
    return nullptr;
  builder.create<func::ReturnOp>(fileLoc, *outputs);

  // Constants and lists consumed only as typed-op attributes are dead now.
  SmallVector<Operation *> dead;
  func.walk<WalkOrder::PostOrder>([&](Operation *op) {
    bool disposable = isa<ConstantOp>(op) ||
                      (isa<GenericOp>(op) &&
                       cast<GenericOp>(op).getKind() == "prim::ListConstruct");
    if (disposable && op->use_empty())
      dead.push_back(op);
  });
  // Post-order lists users before the lists they use; erase in that order.
  for (Operation *op : dead)
    if (op->use_empty())
      op->erase();

  if (failed(verify(*module)))
    return nullptr;
  return module;
}

FailureOr<SmallVector<Value>>
Importer::lookup(at::ArrayRef<jit::Value *> inputs, Location loc) {
  SmallVector<Value> result;
  for (jit::Value *input : inputs) {
    auto it = values.find(input);
    if (it == values.end()) {
      if (modules.count(input))
        return emitError(loc, "module value '%")
               << input->debugName()
               << "' is used as a value; only attribute access on modules "
                  "is supported";
      return emitError(loc, "value '%")
             << input->debugName() << "' is used before it is defined";
    }
    result.push_back(it->second);
  }
  return result;
}

SmallVector<Type> Importer::resultTypes(jit::Node *node) {
  SmallVector<Type> types;
  for (jit::Value *output : node->outputs())
    types.push_back(importType(output->type(), ctx));
  return types;
}

void Importer::bindResults(jit::Node *node, Operation *op) {
  for (auto [output, result] : llvm::zip(node->outputs(), op->getResults()))
    values[output] = result;
}

LogicalResult Importer::importBlock(jit::Block *block) {
  for (jit::Node *node : block->nodes())
    if (failed(importNode(node)))
      return failure();
  return success();
}

/// The path below `parent` of the module a call recorded as instance `name`
/// of `type` was made on: `name` itself, or `<container>.name` for a module
/// called from inside a container that is never called itself
/// (nn.ModuleList, nn.ModuleDict: no forward, so the call stack skips
/// them), containers nested included. Several containers holding such a
/// child give the first in attribute order: its state is declared and read
/// at that path alike, so the model computes the same either way.
std::optional<std::pair<std::string, jit::Module>>
findCalledChild(const jit::Module &parent, const std::string &name,
                const c10::ClassTypePtr &type, unsigned depth = 0) {
  if (parent.hasattr(name) && parent.attr(name).isModule() &&
      parent.attr(name).toModule().type() == type)
    return std::make_pair(name, parent.attr(name).toModule());
  if (depth > 8)
    return std::nullopt;
  for (const jit::NameModule &child : parent.named_children()) {
    if (child.value.find_method("forward"))
      continue;
    if (auto found = findCalledChild(child.value, name, type, depth + 1))
      return std::make_pair(child.name + "." + found->first, found->second);
  }
  return std::nullopt;
}

/// The attribute path of the module whose (inlined) method a node came
/// from, such as "layer1.0.conv1" or, through an nn.ModuleList, "h.0.attn";
/// empty for the top-level forward.
std::string modulePathOf(jit::Node *node, const jit::Module &model) {
  std::string path;
  auto callstack = node->callstack();
  if (!callstack)
    return path;
  std::optional<jit::Module> current = model;
  for (const jit::InlinedCallStackEntry &entry : (*callstack)->vec()) {
    const auto &instance = std::get<2>(entry);
    // Calls of a module's own methods (self._conv_forward, say) are
    // recorded as instance "SELF".
    if (!instance || instance->instance_name() == "SELF")
      continue;
    std::string step = instance->instance_name();
    if (current) {
      auto found = findCalledChild(*current, step, instance->class_type());
      current.reset();
      if (found) {
        step = found->first;
        current = found->second;
      }
    }
    if (!path.empty())
      path += '.';
    path += step;
  }
  return path;
}

LogicalResult Importer::importNode(jit::Node *node) {
  Location loc = importLocation(node->sourceRange(), ctx);
  // Nodes without source (compiler-made constants, say) are reported at the
  // model file.
  if (isa<UnknownLoc>(loc))
    loc = fileLoc;
  // Passes name what they add after the module a site belongs to.
  std::string modulePath = modulePathOf(node, model);
  if (!modulePath.empty())
    loc = NameLoc::get(builder.getStringAttr(modulePath), loc);
  jit::NodeKind kind = node->kind();
  if (kind == jit::prim::Constant) {
    // Inlining leaves the callee constants of prim::CallFunction unused.
    if (!node->output()->hasUses())
      return success();
    std::string error;
    c10::optional<c10::IValue> value = jit::toIValue(node->output());
    Attribute attr = value ? importConstant(*value, ctx, error) : Attribute();
    if (!attr)
      return emitError(loc, "cannot import constant: ")
             << (error.empty() ? "unsupported value" : error);
    auto op = builder.create<ConstantOp>(
        loc, importType(node->output()->type(), ctx), attr);
    values[node->output()] = op;
    return success();
  }
  if (kind == jit::prim::GetAttr)
    return importGetAttr(node, loc);
  if (kind == jit::prim::SetAttr)
    return importSetAttr(node, loc);
  if (kind == jit::prim::If)
    return importIf(node, loc);
  if (kind == jit::prim::Loop)
    return importLoop(node, loc);
  // TorchScript's frontend leaves no other block-carrying node in a saved
  // model (`with` becomes prim::Enter / prim::Exit, which stay generic ops);
  // one from elsewhere has no op to carry its blocks.
  if (!node->blocks().empty())
    return emitError(loc, "cannot import ")
           << kind.toQualString() << ": a node with blocks other than "
           << "prim::If and prim::Loop is not supported";
  if (Operation *op = tryImportTyped(node, loc)) {
    bindResults(node, op);
    return success();
  }
  Operation *op = importGeneric(node, loc);
  if (!op)
    return failure();
  bindResults(node, op);
  return success();
}

LogicalResult Importer::importGetAttr(jit::Node *node, Location loc) {
  auto owner = modules.find(node->input());
  if (owner == modules.end()) {
    // An attribute of an object that is not a module: keep it generic.
    Operation *op = importGeneric(node, loc);
    if (!op)
      return failure();
    bindResults(node, op);
    return success();
  }
  const std::string &name = node->s(jit::attr::name);
  std::string path = joinPath(owner->second.path, name);
  const jit::Module &module = owner->second.module;
  c10::ClassTypePtr type = module.type();
  auto slot = type->findAttributeSlot(name);
  if (!slot)
    return emitError(loc, "module '")
           << (owner->second.path.empty() ? "self" : owner->second.path)
           << "' has no attribute '" << name << "'";
  c10::IValue value = module._ivalue()->getSlot(*slot);
  if (value.isModule()) {
    modules[node->output()] = ModuleRef{path, value.toModule()};
    return success();
  }
  Operation *op;
  if (value.isTensor() &&
      (type->is_parameter(*slot) || type->is_buffer(*slot))) {
    // An Optional[Tensor] slot (a conv bias, say) that holds a tensor reads
    // as a tensor; export re-reads the slot with its declared type.
    Type resultType = importType(node->output()->type(), ctx);
    if (!isa<TorchTensorType>(resultType))
      resultType = TorchTensorType::get(ctx);
    auto tied = tiedTo.find(path);
    if (tied != tiedTo.end())
      path = tied->second;
    op = builder.create<GetParamOp>(loc, resultType,
                                    FlatSymbolRefAttr::get(ctx, path));
  } else {
    IntegerAttr imported;
    if (value.isInt())
      imported = builder.getI64IntegerAttr(value.toInt());
    op = builder.create<GetAttrOp>(loc, importType(node->output()->type(), ctx),
                                   path, imported);
  }
  bindResults(node, op);
  return success();
}

LogicalResult Importer::importSetAttr(jit::Node *node, Location loc) {
  auto owner = modules.find(node->inputs()[0]);
  if (owner == modules.end()) {
    Operation *op = importGeneric(node, loc);
    return success(op != nullptr);
  }
  FailureOr<SmallVector<Value>> value = lookup(node->inputs()[1], loc);
  if (failed(value))
    return failure();
  builder.create<SetAttrOp>(
      loc, joinPath(owner->second.path, node->s(jit::attr::name)),
      value->front());
  return success();
}

LogicalResult Importer::importIf(jit::Node *node, Location loc) {
  FailureOr<SmallVector<Value>> condition = lookup(node->input(), loc);
  if (failed(condition))
    return failure();
  if (!isa<BoolType>(condition->front().getType()))
    return emitError(loc, "prim::If condition must be a bool");
  auto ifOp = builder.create<IfOp>(loc, resultTypes(node), condition->front());
  OpBuilder::InsertionGuard guard(builder);
  for (auto [region, block] : llvm::zip(ifOp->getRegions(), node->blocks())) {
    builder.setInsertionPointToEnd(&region.emplaceBlock());
    if (failed(importBlock(block)))
      return failure();
    FailureOr<SmallVector<Value>> yielded = lookup(block->outputs(), loc);
    if (failed(yielded))
      return failure();
    builder.create<YieldOp>(loc, *yielded);
  }
  bindResults(node, ifOp);
  return success();
}

LogicalResult Importer::importLoop(jit::Node *node, Location loc) {
  FailureOr<SmallVector<Value>> inputs = lookup(node->inputs(), loc);
  if (failed(inputs))
    return failure();
  if (inputs->size() < 2 || !isa<IntType>((*inputs)[0].getType()) ||
      !isa<BoolType>((*inputs)[1].getType()))
    return emitError(loc, "prim::Loop needs an int trip count and a bool "
                          "condition");
  auto loop =
      builder.create<LoopOp>(loc, resultTypes(node), (*inputs)[0], (*inputs)[1],
                             ArrayRef<Value>(*inputs).drop_front(2));
  jit::Block *body = node->blocks()[0];
  OpBuilder::InsertionGuard guard(builder);
  Block &entry = loop.getBody().emplaceBlock();
  for (jit::Value *input : body->inputs())
    values[input] = entry.addArgument(importType(input->type(), ctx), loc);
  builder.setInsertionPointToEnd(&entry);
  if (failed(importBlock(body)))
    return failure();
  FailureOr<SmallVector<Value>> yielded = lookup(body->outputs(), loc);
  if (failed(yielded))
    return failure();
  builder.create<YieldOp>(loc, *yielded);
  bindResults(node, loop);
  return success();
}

std::optional<c10::IValue> Importer::constantValue(jit::Value *value) {
  if (c10::optional<c10::IValue> constant = jit::toIValue(value))
    return *constant;
  jit::Node *def = value->node();
  if (def->kind() != jit::prim::ListConstruct)
    return std::nullopt;
  c10::impl::GenericList list(
      value->type()->expectRef<c10::ListType>().getElementType());
  for (jit::Value *element : def->inputs()) {
    c10::optional<c10::IValue> constant = jit::toIValue(element);
    if (!constant)
      return std::nullopt;
    list.push_back(*constant);
  }
  return c10::IValue(list);
}

/// The attribute a typed op keeps for a constant schema argument of type
/// `type`: int lists as dense arrays, dtypes and memory formats by name,
/// other scalars as constants do. Null if it has no such form.
Attribute typedOpAttribute(const c10::IValue &value, const c10::TypePtr &type,
                           MLIRContext *ctx) {
  // An int the typed op cannot take as a dtype or memory format stays an
  // int, and the op's verifier sends the node to the generic op.
  if (Attribute attr = importEnumAttribute(value, type, ctx))
    return attr;
  if (value.isIntList())
    return DenseI64ArrayAttr::get(ctx, value.toIntVector());
  if (!value.isBool() && !value.isInt() && !value.isDouble() &&
      !value.isString())
    return {};
  std::string error;
  return importConstant(value, ctx, error);
}

Operation *Importer::tryImportTyped(jit::Node *node, Location loc) {
  const c10::FunctionSchema *schema = node->maybeSchema();
  if (!schema)
    return nullptr;
  std::string key = schema->name();
  if (!schema->overload_name().empty())
    key += "." + schema->overload_name();
  auto it = typedOps.find(key);
  if (it == typedOps.end())
    return nullptr;
  OperationName opName = it->second.name;
  bool inplace = it->second.inplace;
  ArrayRef<StringAttr> attrNames = opName.getAttributeNames();
  auto isAttr = [&](StringRef name) {
    return llvm::any_of(attrNames,
                        [&](StringAttr attr) { return attr == name; });
  };

  OperationState state(loc, opName);
  for (auto [arg, input] : llvm::zip(schema->arguments(), node->inputs())) {
    if (!isAttr(arg.name())) {
      auto found = values.find(input);
      if (found == values.end())
        return nullptr;
      state.operands.push_back(found->second);
      continue;
    }
    std::optional<c10::IValue> constant = constantValue(input);
    if (!constant)
      return nullptr; // Not constant: the generic op keeps it as an operand.
    if (constant->isNone())
      continue;
    // The real type: a schema declares ScalarType and MemoryFormat arguments
    // as int otherwise.
    Attribute attr = typedOpAttribute(*constant, arg.real_type(), ctx);
    if (!attr)
      return nullptr;
    state.addAttribute(arg.name(), attr);
  }
  if (inplace)
    state.addAttribute("inplace", builder.getUnitAttr());
  state.addTypes(resultTypes(node));
  Operation *op = builder.create(state);
  // A node whose arguments the typed op cannot express (a type the op does
  // not accept, say) stays generic.
  ScopedDiagnosticHandler quiet(ctx, [](Diagnostic &) { return success(); });
  if (failed(verify(op, /*verifyRecursively=*/false))) {
    op->erase();
    return nullptr;
  }
  return op;
}

Attribute Importer::nodeAttribute(jit::Node *node, jit::Symbol name,
                                  std::string &error) {
  switch (node->kindOf(name)) {
  case jit::AttributeKind::i:
    return builder.getI64IntegerAttr(node->i(name));
  case jit::AttributeKind::f:
    return builder.getF64FloatAttr(node->f(name));
  case jit::AttributeKind::s:
    return builder.getStringAttr(node->s(name));
  case jit::AttributeKind::is:
    return builder.getDenseI64ArrayAttr(node->is(name));
  case jit::AttributeKind::fs:
    return builder.getDenseF64ArrayAttr(node->fs(name));
  case jit::AttributeKind::ss: {
    SmallVector<Attribute> strings;
    for (const std::string &s : node->ss(name))
      strings.push_back(builder.getStringAttr(s));
    return builder.getArrayAttr(strings);
  }
  case jit::AttributeKind::ty:
    return TypeAttr::get(importType(node->ty(name), ctx));
  case jit::AttributeKind::tys: {
    SmallVector<Attribute> types;
    for (const c10::TypePtr &type : node->tys(name))
      types.push_back(TypeAttr::get(importType(type, ctx)));
    return builder.getArrayAttr(types);
  }
  case jit::AttributeKind::t:
    return importConstant(node->t(name), ctx, error);
  case jit::AttributeKind::ival:
    return importConstant(node->ival(name), ctx, error);
  case jit::AttributeKind::g:
  case jit::AttributeKind::gs:
    // prim::fork's (torch.jit.fork's) forked code, say.
    error = "a subgraph is not supported";
    return {};
  default:
    error = std::string("attribute kind ") + jit::toString(node->kindOf(name)) +
            " is not supported";
    return {};
  }
}

Operation *Importer::importGeneric(jit::Node *node, Location loc) {
  FailureOr<SmallVector<Value>> operands = lookup(node->inputs(), loc);
  if (failed(operands))
    return nullptr;
  SmallVector<NamedAttribute> attrs;
  for (jit::Symbol name : node->attributeNames()) {
    std::string error;
    Attribute attr = nodeAttribute(node, name, error);
    if (!attr) {
      emitError(loc, "cannot import ")
          << node->kind().toQualString() << ": attribute '"
          << name.toUnqualString() << "': " << error;
      return nullptr;
    }
    attrs.push_back(builder.getNamedAttr(name.toUnqualString(), attr));
  }
  DictionaryAttr attrDict =
      attrs.empty() ? DictionaryAttr() : builder.getDictionaryAttr(attrs);
  return builder.create<GenericOp>(
      loc, resultTypes(node), node->kind().toQualString(), *operands, attrDict);
}

} // namespace

OwningOpRef<ModuleOp>
composer::importTorchScriptModule(const jit::Module &model,
                                  StringRef sourcePath, MLIRContext *ctx,
                                  uint64_t maxOps) {
  ctx->loadDialect<ComposerDialect, func::FuncDialect>();
  return Importer(ctx, model, maxOps).run(sourcePath);
}
