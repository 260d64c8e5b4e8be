//===- MethodPassesTest.cpp - the registry of method passes ---------------===//
//
// The method passes are the passes declared as MethodPass (MethodPass.td)
// and registered, composer's by the passes library, a plugin's by itself.
//
//===----------------------------------------------------------------------===//

#include "composer/Passes/Passes.h"

#include "llvm/ADT/STLExtras.h"

#include <gtest/gtest.h>

using namespace composer;

namespace {

TEST(MethodPassesTest, MethodsAreThePassesDeclaredAsMethodPass) {
  EXPECT_TRUE(isMethodPass("composer-blurpool"));
  EXPECT_TRUE(isMethodPass("composer-alibi"));
  EXPECT_TRUE(isMethodPass("composer-weight-standardization"));
  EXPECT_FALSE(isMethodPass("composer-refine-types"));
  EXPECT_FALSE(isMethodPass("composer-lower-to-aten"));
  EXPECT_FALSE(isMethodPass("composer-lower-to-runtime"));
  EXPECT_TRUE(llvm::is_sorted(getMethodPassArguments()));
}

TEST(MethodPassesTest, KeepingAccuracyIsDeclaredWithThePass) {
  EXPECT_TRUE(methodKeepsAccuracy("composer-channels-last"));
  EXPECT_TRUE(methodKeepsAccuracy("composer-mixed-precision"));
  EXPECT_TRUE(methodKeepsAccuracy("composer-activation-checkpointing"));
  EXPECT_FALSE(methodKeepsAccuracy("composer-blurpool"));
  EXPECT_FALSE(methodKeepsAccuracy("composer-alibi"));
  EXPECT_FALSE(methodKeepsAccuracy("composer-refine-types"));
}

TEST(MethodPassesTest, ARegistrationAddsItsMethodsOnce) {
  // As a pass plugin registers its methods when it is loaded.
  static constexpr MethodPassDeclaration kPluginMethods[] = {
      {"test-plugin-method", true}, {"composer-blurpool", false}};
  EXPECT_FALSE(isMethodPass("test-plugin-method"));
  MethodPassRegistration registration(kPluginMethods);
  EXPECT_TRUE(isMethodPass("test-plugin-method"));
  EXPECT_TRUE(methodKeepsAccuracy("test-plugin-method"));
  EXPECT_EQ(llvm::count(getMethodPassArguments(), "composer-blurpool"), 1);
  EXPECT_TRUE(llvm::is_sorted(getMethodPassArguments()));
}

} // namespace
