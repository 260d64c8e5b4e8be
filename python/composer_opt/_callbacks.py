"""composer_opt.Callback: Composer's Callback, run by the engine."""

from typing import Any, Set

# Composer's events, in the order a run fires them.
EVENTS = (
    "init", "before_load", "after_load", "fit_start", "epoch_start",
    "before_dataloader", "after_dataloader", "batch_start",
    "before_train_batch", "before_forward", "after_forward", "before_loss",
    "after_loss", "before_backward", "after_backward", "after_train_batch",
    "batch_end", "batch_checkpoint", "epoch_end", "epoch_checkpoint",
    "eval_start", "eval_batch_start", "eval_before_forward",
    "eval_after_forward", "eval_batch_end", "eval_end", "eval_before_all",
    "eval_after_all", "eval_standalone_start", "eval_standalone_end",
    "fit_end",
    "predict_start", "predict_batch_start", "predict_before_forward",
    "predict_after_forward", "predict_batch_end", "predict_end",
)


class Callback:
    """Override the events to handle, as with Composer's Callback::

        class Record(composer_opt.Callback):
            def batch_end(self, state, logger):
                logger.log_metrics({"my/loss": float(state.loss)})

    Each receives the engine's state (timestamp, model, loss, outputs,
    batch, eval_metrics, stop_training()) and a logger (log_metrics).
    Only the events a subclass overrides cross into Python. An exception
    stops the run after the current batch, after its checkpoint where one
    is configured, and is raised from fit().
    """

    def run_event(self, event: str, state: Any, logger: Any) -> None:
        getattr(self, event)(state, logger)


def _ignore(self, state: Any, logger: Any) -> None:
    """Does nothing unless overridden."""


for _event in EVENTS:
    setattr(Callback, _event, _ignore)


def handled_events(callback: Callback) -> Set[str]:
    """The events `callback` handles: those its class overrides, or all when
    it overrides run_event."""
    cls = type(callback)
    if cls.run_event is not Callback.run_event:
        return set(EVENTS)
    return {e for e in EVENTS if getattr(cls, e) is not _ignore}
