//===- CallbackRegistry.cpp - Callbacks, by name --------------------------===//

#include "composer/Runtime/Callbacks.h"

namespace composer::runtime {
namespace {

ComponentRegistry<Callback> &callbackRegistry() {
  static ComponentRegistry<Callback> callbacks("callback");
  return callbacks;
}

} // namespace

std::vector<const CallbackInfo *> getRegisteredCallbacks() {
  return callbackRegistry().all();
}

const CallbackInfo *findCallback(std::string_view name) {
  return callbackRegistry().find(name);
}

std::unique_ptr<Callback> createCallback(std::string_view name,
                                         const OptionValues &options) {
  return callbackRegistry().create(name, options);
}

void registerCallback(CallbackInfo info) {
  callbackRegistry().add(std::move(info));
}

} // namespace composer::runtime
