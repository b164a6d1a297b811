-------------------------- MODULE WorkLaneMutants --------------------------
(***************************************************************************)
(* Seeded bugs in the Work Lane specification: each is the design with one *)
(* critical section split, moved or dropped, the way a port could get it   *)
(* wrong.  Each mutant X has its own next-state relation NextX and         *)
(* specification SpecX, with the same per-thread weak fairness as Spec     *)
(* (written out in full, so that TLC names each step of a trace after its  *)
(* action).                                                                *)
(* Twin of model_checks/designs/work_lane/spec_mutants.py; the property   *)
(* each must violate, and the length of the shortest counterexample, are   *)
(* listed in spec/tla/README.md.                                           *)
(*                                                                         *)
(* The mutant small-ready-queue changes no action: it is Spec with         *)
(* ReadyCapacity < NLanes, i.e. without ASSUME ReadyQueueHoldsEveryLane.   *)
(***************************************************************************)
EXTENDS WorkLane

-----------------------------------------------------------------------------
(* split-idle: the end-of-drain emptiness check and the Idle write are in  *)
(* separate critical sections.  Expected: NoLostWakeup.                    *)

(* BUG: under the lane mutex the drainer sees the lane empty ... and lets  *)
(* go of the mutex.                                                        *)
DrainSawEmpty(w) ==
    /\ DrainOver(w)
    /\ queue[worker[w].lane] = <<>>
    /\ worker' = [worker EXCEPT ![w].pc = "going-idle", ![w].hand = None]
    /\ UNCHANGED <<queue, status, ready, producer, stopper, phase, mode,
                   accepted, invoked, discarded>>

(* BUG: ... then, in a second critical section, writes Idle without        *)
(* looking again.                                                          *)
DrainEndIdleLate(w) ==
    /\ worker[w].pc = "going-idle"
    /\ status' = [status EXCEPT ![worker[w].lane] = "Idle"]
    /\ worker' = [worker EXCEPT ![w] = IdleWorker]
    /\ UNCHANGED <<queue, ready, producer, stopper, phase, mode,
                   accepted, invoked, discarded>>

WorkerSplitIdle(w) ==
    \/ Take(w)
    \/ DrainBegin(w)
    \/ GiveUpDrain(w)
    \/ Pop(w)
    \/ PopEmpty(w)
    \/ Invoke(w)
    \/ DrainSawEmpty(w)
    \/ DrainEndResubmit(w)
    \/ WorkerSubmit(w)
    \/ \E m \in Modes : StopFromCallback(w, m)
    \/ DrainEndIdleLate(w)

NextSplitIdle ==
    \/ \E p \in Producers : Producer(p)
    \/ \E w \in Workers : WorkerSplitIdle(w)
    \/ \E t \in Stoppers : Stopper(t)
    \/ Terminating

SpecSplitIdle ==
    /\ Init
    /\ [][NextSplitIdle]_vars
    /\ \A w \in Workers : WF_vars(WorkerSplitIdle(w))
    /\ \A p \in Producers : WF_vars(Producer(p))
    /\ \A t \in Stoppers : WF_vars(Stopper(t))

-----------------------------------------------------------------------------
(* publish-outside-mutex: the Idle -> Scheduled decision is taken under    *)
(* the lane mutex, the item is published after it.  Expected: NoLostWakeup.*)

(* BUG: under the lane mutex the producer decides whether to reserve, but  *)
(* publishes later.                                                        *)
PostDecideFirst(p) ==
    LET l       == NextLane(p)
        reserve == status[l] = "Idle"
    IN  /\ producer[p].pc = "admitted"
        /\ Len(queue[l]) < LaneCapacity
        /\ status' = IF reserve THEN [status EXCEPT ![l] = "Scheduled"] ELSE status
        /\ producer' = [producer EXCEPT ![p] =
                          [pc |-> IF reserve THEN "publishing+owe" ELSE "publishing",
                           posts |-> @.posts, owed |-> l]]
        /\ UNCHANGED <<queue, ready, worker, stopper, phase, mode,
                       accepted, invoked, discarded>>

(* BUG: the item enters the queue outside the mutex, after the decision.   *)
PublishLate(p) ==
    LET l == producer[p].owed
        k == producer[p].posts
    IN  /\ producer[p].pc \in {"publishing", "publishing+owe"}
        /\ queue' = [queue EXCEPT ![l] = Append(@, <<accepted[l] + 1, Item(p, k)>>)]
        /\ accepted' = [accepted EXCEPT ![l] = @ + 1]
        /\ producer' = [producer EXCEPT ![p] =
                          IF producer[p].pc = "publishing+owe"
                          THEN [pc |-> "owes", posts |-> k + 1, owed |-> l]
                          ELSE IdleProducer(k + 1)]
        /\ UNCHANGED <<status, ready, worker, stopper, phase, mode,
                       invoked, discarded>>

ProducerPublishOutsideMutex(p) ==
    \/ PostInvalidHandle(p)
    \/ Admit(p)
    \/ PostRefused(p)
    \/ PostFull(p)
    \/ PostDecideFirst(p)
    \/ ProducerSubmit(p)
    \/ PublishLate(p)

NextPublishOutsideMutex ==
    \/ \E p \in Producers : ProducerPublishOutsideMutex(p)
    \/ \E w \in Workers : Worker(w)
    \/ \E t \in Stoppers : Stopper(t)
    \/ Terminating

SpecPublishOutsideMutex ==
    /\ Init
    /\ [][NextPublishOutsideMutex]_vars
    /\ \A w \in Workers : WF_vars(Worker(w))
    /\ \A p \in Producers : WF_vars(ProducerPublishOutsideMutex(p))
    /\ \A t \in Stoppers : WF_vars(Stopper(t))

-----------------------------------------------------------------------------
(* double-reserve: a post to a Scheduled lane reserves it again.           *)
(* Expected: OneReservationPerLane.                                        *)

(* BUG: a post to a lane that is Idle *or Scheduled* takes a reservation.  *)
PostReservesScheduledLane(p) ==
    LET l       == NextLane(p)
        k       == producer[p].posts
        reserve == status[l] # "Draining"
    IN  /\ producer[p].pc = "admitted"
        /\ Len(queue[l]) < LaneCapacity
        /\ queue' = [queue EXCEPT ![l] = Append(@, <<accepted[l] + 1, Item(p, k)>>)]
        /\ accepted' = [accepted EXCEPT ![l] = @ + 1]
        /\ status' = IF reserve THEN [status EXCEPT ![l] = "Scheduled"] ELSE status
        /\ producer' = [producer EXCEPT ![p] =
                          IF reserve THEN [pc |-> "owes", posts |-> k + 1, owed |-> l]
                                     ELSE IdleProducer(k + 1)]
        /\ UNCHANGED <<ready, worker, stopper, phase, mode, invoked, discarded>>

ProducerDoubleReserve(p) ==
    \/ PostInvalidHandle(p)
    \/ Admit(p)
    \/ PostRefused(p)
    \/ PostFull(p)
    \/ PostReservesScheduledLane(p)
    \/ ProducerSubmit(p)

NextDoubleReserve ==
    \/ \E p \in Producers : ProducerDoubleReserve(p)
    \/ \E w \in Workers : Worker(w)
    \/ \E t \in Stoppers : Stopper(t)
    \/ Terminating

SpecDoubleReserve ==
    /\ Init
    /\ [][NextDoubleReserve]_vars
    /\ \A w \in Workers : WF_vars(Worker(w))
    /\ \A p \in Producers : WF_vars(ProducerDoubleReserve(p))
    /\ \A t \in Stoppers : WF_vars(Stopper(t))

-----------------------------------------------------------------------------
(* small-ready-queue: Spec itself, under constants with ReadyCapacity <    *)
(* NLanes.  Expected: ReadyQueueBounded.                                   *)

NextSmallReadyQueue == Next
SpecSmallReadyQueue == Spec

-----------------------------------------------------------------------------
(* stop-skips-inflight: Stop goes on without waiting for posts in flight.  *)
(* Expected: StoppedMeansQuiet.                                            *)

(* BUG: Stop goes on while a TryPost that passed the stop check has not    *)
(* published yet.                                                          *)
StopBeginWithoutWaiting(t) ==
    /\ stopper[t] = "active"
    /\ phase = "Closing"
    /\ phase' = "Stopping"
    /\ UNCHANGED <<queue, status, ready, producer, worker, stopper, mode,
                   accepted, invoked, discarded>>

StopperSkipsInflight(t) ==
    \/ StopCall(t)
    \/ StopWhileStopping(t)
    \/ StopWhenStopped(t)
    \/ StopBeginWithoutWaiting(t)
    \/ StopEndDrain(t)
    \/ \E l \in Lanes : DiscardLane(t, l)
    \/ StopEndDiscard(t)

NextStopSkipsInflight ==
    \/ \E p \in Producers : Producer(p)
    \/ \E w \in Workers : Worker(w)
    \/ \E t \in Stoppers : StopperSkipsInflight(t)
    \/ Terminating

SpecStopSkipsInflight ==
    /\ Init
    /\ [][NextStopSkipsInflight]_vars
    /\ \A w \in Workers : WF_vars(Worker(w))
    /\ \A p \in Producers : WF_vars(Producer(p))
    /\ \A t \in Stoppers : WF_vars(StopperSkipsInflight(t))

-----------------------------------------------------------------------------
(* ignore-budget: a drain pops until the lane is empty.                    *)
(* Expected: BudgetRespected.                                              *)

(* BUG: the drainer keeps popping past MaxPerDrain ...                     *)
PopIgnoringBudget(w) ==
    LET l == worker[w].lane IN
    /\ worker[w].pc = "drain"
    /\ worker[w].hand = None
    /\ queue[l] # <<>>
    /\ queue' = [queue EXCEPT ![l] = Tail(@)]
    /\ worker' = [worker EXCEPT ![w].hand = Head(queue[l])]
    /\ UNCHANGED <<status, ready, producer, stopper, phase, mode,
                   accepted, invoked, discarded>>

(* ... and only an empty lane ends the drain.                              *)
PopEmptyIgnoringBudget(w) ==
    /\ worker[w].pc = "drain"
    /\ worker[w].hand = None
    /\ queue[worker[w].lane] = <<>>
    /\ worker' = [worker EXCEPT ![w].pc = "decide"]
    /\ UNCHANGED <<queue, status, ready, producer, stopper, phase, mode,
                   accepted, invoked, discarded>>

(* ... so the end-of-drain decision is taken only after a pop found the    *)
(* lane empty.                                                             *)
DrainEndIdleWhenEmpty(w) == worker[w].pc = "decide" /\ DrainEndIdle(w)
DrainEndResubmitWhenEmpty(w) == worker[w].pc = "decide" /\ DrainEndResubmit(w)

WorkerIgnoreBudget(w) ==
    \/ Take(w)
    \/ DrainBegin(w)
    \/ GiveUpDrain(w)
    \/ PopIgnoringBudget(w)
    \/ PopEmptyIgnoringBudget(w)
    \/ Invoke(w)
    \/ DrainEndIdleWhenEmpty(w)
    \/ DrainEndResubmitWhenEmpty(w)
    \/ WorkerSubmit(w)
    \/ \E m \in Modes : StopFromCallback(w, m)

NextIgnoreBudget ==
    \/ \E p \in Producers : Producer(p)
    \/ \E w \in Workers : WorkerIgnoreBudget(w)
    \/ \E t \in Stoppers : Stopper(t)
    \/ Terminating

SpecIgnoreBudget ==
    /\ Init
    /\ [][NextIgnoreBudget]_vars
    /\ \A w \in Workers : WF_vars(WorkerIgnoreBudget(w))
    /\ \A p \in Producers : WF_vars(Producer(p))
    /\ \A t \in Stoppers : WF_vars(Stopper(t))

=============================================================================
