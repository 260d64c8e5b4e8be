//===- Event.h - Composer's training events ---------------------*- C++ -*-===//
#ifndef COMPOSER_RUNTIME_EVENT_H
#define COMPOSER_RUNTIME_EVENT_H

namespace composer::runtime {

/// The events of Composer's training loop, in the order one batch fires them.
enum class Event {
  Init,
  BeforeLoad,
  AfterLoad,
  FitStart,
  EpochStart,
  BeforeDataloader,
  AfterDataloader,
  BatchStart,
  BeforeTrainBatch,
  BeforeForward,
  AfterForward,
  BeforeLoss,
  AfterLoss,
  BeforeBackward,
  AfterBackward,
  AfterTrainBatch,
  BatchEnd,
  BatchCheckpoint,
  EpochEnd,
  EpochCheckpoint,
  EvalStart,
  EvalBatchStart,
  EvalBeforeForward,
  EvalAfterForward,
  EvalBatchEnd,
  EvalEnd,
  /// Around the evaluators one point of a run evaluates, and around a
  /// standalone evaluation (Trainer::evaluate).
  EvalBeforeAll,
  EvalAfterAll,
  EvalStandaloneStart,
  EvalStandaloneEnd,
  FitEnd,
  PredictStart,
  PredictBatchStart,
  PredictBeforeForward,
  PredictAfterForward,
  PredictBatchEnd,
  PredictEnd,
};

/// Composer's name of an event: "BATCH_START", "EVAL_END", ...
const char *eventName(Event event);

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_EVENT_H
