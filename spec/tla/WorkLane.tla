----------------------------- MODULE WorkLane -----------------------------
(***************************************************************************)
(* The Work Lane scheduler.                                                *)
(*                                                                         *)
(* Producers post items to lanes.  A lane is a bounded FIFO queue plus a   *)
(* status Idle | Scheduled | Draining, kept under the lane's mutex.  A     *)
(* lane that has work holds exactly one reservation: a drain work item in  *)
(* the pool's bounded FIFO ready queue, or the duty of some thread to put  *)
(* one there.  Workers take work items, drain up to MaxPerDrain items      *)
(* without the mutex, and decide under the mutex whether the lane goes     *)
(* Idle or is resubmitted.  Stop(drain) finishes what was accepted;        *)
(* Stop(discard) drops what is queued.                                     *)
(*                                                                         *)
(* Each action is one critical section (or one lock-free step) of the      *)
(* real code, so a lost wakeup that needs two threads to interleave inside *)
(* the algorithm is a behaviour of this specification.                     *)
(*                                                                         *)
(* This module is the twin of spec/work_lane.py; spec/tla/README.md maps   *)
(* the two name by name.  The model values for a configuration (and the    *)
(* ASSUMEs that the configuration must satisfy) are in the generated       *)
(* MC_*.tla modules.                                                       *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets

CONSTANTS
    NLanes,         \* the lanes are 0 .. NLanes-1
    Workers,        \* the worker threads (model values, interchangeable)
    LaneCapacity,   \* the bound of each lane's queue
    MaxPerDrain,    \* the drain budget, counted in items
    ReadyCapacity,  \* the bound of the pool's ready queue
    Script,         \* Script[p] is the sequence of lanes producer p posts to
    Stops,          \* Stops[t] is the mode of the one Stop call made by thread t
    CallbackStop,   \* whether a callback tries to Stop its own scheduler
    None            \* a value that is no lane, no item and no mode

Lanes     == 0 .. NLanes - 1
Producers == DOMAIN Script
Stoppers  == DOMAIN Stops
Modes     == {"drain", "discard"}

(* An entry of Script that is None is a post with an invalid lane handle.  *)
PositiveSizes ==
    /\ NLanes \in Nat \ {0}
    /\ Workers # {}
    /\ LaneCapacity \in Nat \ {0}
    /\ MaxPerDrain \in Nat \ {0}
    /\ ReadyCapacity \in Nat \ {0}

(* Each lane has at most one reservation, so a ready queue as long as the  *)
(* lane count never fills.                                                 *)
ReadyQueueHoldsEveryLane == ReadyCapacity >= NLanes

ScriptIsWellFormed ==
    /\ \A p \in Producers : \A i \in 1 .. Len(Script[p]) : Script[p][i] \in Lanes \cup {None}
    /\ \A t \in Stoppers : Stops[t] \in Modes
    /\ CallbackStop \in BOOLEAN

-----------------------------------------------------------------------------
VARIABLES
    queue,      \* queue[l]: the lane's queue, a sequence of <<position, item>>
    status,     \* status[l] \in {"Idle", "Scheduled", "Draining"}
    ready,      \* the pool's FIFO of drain work items, one lane each
    producer,   \* producer[p]: [pc, posts (done so far), owed (lane or None)]
    worker,     \* worker[w]: [pc, lane, n (items invoked), hand (popped entry)]
    stopper,    \* stopper[t] \in {"idle", "active", "done"}
    phase,      \* "Running" | "Closing" | "Stopping" | "Stopped"
    mode,       \* the mode of the Stop in progress, or None
    accepted,   \* accepted[l]: how many items the lane accepted
    invoked,    \* invoked[l]: the position of the last item invoked
    discarded   \* discarded[l]: how many items Stop(discard) dropped

vars == <<queue, status, ready, producer, worker, stopper, phase, mode,
          accepted, invoked, discarded>>

(* An item is named by who posted it and when: the k-th post (from 0) of   *)
(* producer p is the item <<p, k>>.                                        *)
Item(p, k) == <<p, k>>

IdleWorker == [pc |-> "idle", lane |-> None, n |-> 0, hand |-> None]
IdleProducer(k) == [pc |-> "idle", posts |-> k, owed |-> None]

TypeOK ==
    /\ queue \in [Lanes -> Seq((Nat \ {0}) \X (Producers \X Nat))]
    /\ status \in [Lanes -> {"Idle", "Scheduled", "Draining"}]
    /\ ready \in Seq(Lanes)
    /\ producer \in [Producers -> [pc : STRING, posts : Nat, owed : Lanes \cup {None}]]
    /\ worker \in [Workers -> [pc : STRING, lane : Lanes \cup {None}, n : Nat,
                               hand : ((Nat \ {0}) \X (Producers \X Nat)) \cup {None}]]
    /\ stopper \in [Stoppers -> {"idle", "active", "done"}]
    /\ phase \in {"Running", "Closing", "Stopping", "Stopped"}
    /\ mode \in Modes \cup {None}
    /\ accepted \in [Lanes -> Nat]
    /\ invoked \in [Lanes -> Nat]
    /\ discarded \in [Lanes -> Nat]

Init ==
    /\ queue = [l \in Lanes |-> <<>>]
    /\ status = [l \in Lanes |-> "Idle"]
    /\ ready = <<>>
    /\ producer = [p \in Producers |-> IdleProducer(0)]
    /\ worker = [w \in Workers |-> IdleWorker]
    /\ stopper = [t \in Stoppers |-> "idle"]
    /\ phase = "Running"
    /\ mode = None
    /\ accepted = [l \in Lanes |-> 0]
    /\ invoked = [l \in Lanes |-> 0]
    /\ discarded = [l \in Lanes |-> 0]

-----------------------------------------------------------------------------
(* Helpers.                                                                *)

(* Stop(discard) has begun (StopBegin, the logged stop_begin): no drain    *)
(* may begin any more. Not while it only closes admission (StopCall).      *)
Discarding == mode = "discard" /\ phase = "Stopping"

PostsInFlight == \E p \in Producers : producer[p].pc # "idle"

WorkersIdle == \A w \in Workers : worker[w].pc = "idle"

(* Whether producer p has a post left, and the lane of that post.          *)
HasPost(p) == producer[p].posts < Len(Script[p])
NextLane(p) == Script[p][producer[p].posts + 1]

(* How many times lane l occurs in the ready queue.                        *)
InReady(l) == Cardinality({i \in 1 .. Len(ready) : ready[i] = l})

(* How many reservations the lane has: work items queued, taken, being     *)
(* drained or owed.                                                        *)
Reservations(l) ==
      InReady(l)
    + Cardinality({w \in Workers : worker[w].lane = l /\ worker[w].pc # "idle"})
    + Cardinality({p \in Producers : producer[p].pc = "owes" /\ producer[p].owed = l})

-----------------------------------------------------------------------------
(* Producers.                                                              *)

(* TryPost with a handle that is not a lane of this scheduler: refused.    *)
PostInvalidHandle(p) ==
    /\ producer[p].pc = "idle"
    /\ HasPost(p)
    /\ NextLane(p) = None
    /\ producer' = [producer EXCEPT ![p] = IdleProducer(@.posts + 1)]
    /\ UNCHANGED <<queue, status, ready, worker, stopper, phase, mode,
                   accepted, invoked, discarded>>

(* The stop-state check passes: the post is in flight; Stop waits for it.  *)
Admit(p) ==
    /\ producer[p].pc = "idle"
    /\ HasPost(p)
    /\ NextLane(p) # None
    /\ phase = "Running"
    /\ producer' = [producer EXCEPT ![p].pc = "admitted"]
    /\ UNCHANGED <<queue, status, ready, worker, stopper, phase, mode,
                   accepted, invoked, discarded>>

(* The stop-state check fails: Stop has begun, the post is INVALID_STATE.  *)
PostRefused(p) ==
    /\ producer[p].pc = "idle"
    /\ HasPost(p)
    /\ NextLane(p) # None
    /\ phase # "Running"
    /\ producer' = [producer EXCEPT ![p] = IdleProducer(@.posts + 1)]
    /\ UNCHANGED <<queue, status, ready, worker, stopper, phase, mode,
                   accepted, invoked, discarded>>

(* Under the lane mutex: the lane is full; the item stays with the caller. *)
PostFull(p) ==
    /\ producer[p].pc = "admitted"
    /\ Len(queue[NextLane(p)]) >= LaneCapacity
    /\ producer' = [producer EXCEPT ![p] = IdleProducer(@.posts + 1)]
    /\ UNCHANGED <<queue, status, ready, worker, stopper, phase, mode,
                   accepted, invoked, discarded>>

(* Under the lane mutex: publish the item and, if the lane was Idle, take  *)
(* its one reservation (the producer then owes a work item).               *)
PostAccepted(p) ==
    LET l       == NextLane(p)
        k       == producer[p].posts
        reserve == status[l] = "Idle"
    IN  /\ producer[p].pc = "admitted"
        /\ Len(queue[l]) < LaneCapacity
        /\ queue' = [queue EXCEPT ![l] = Append(@, <<accepted[l] + 1, Item(p, k)>>)]
        /\ accepted' = [accepted EXCEPT ![l] = @ + 1]
        /\ status' = IF reserve THEN [status EXCEPT ![l] = "Scheduled"] ELSE status
        /\ producer' = [producer EXCEPT ![p] =
                          IF reserve THEN [pc |-> "owes", posts |-> k + 1, owed |-> l]
                                     ELSE IdleProducer(k + 1)]
        /\ UNCHANGED <<ready, worker, stopper, phase, mode, invoked, discarded>>

(* Outside the lane mutex: the producer that reserved the lane puts its    *)
(* work item in the ready queue.                                           *)
ProducerSubmit(p) ==
    /\ producer[p].pc = "owes"
    /\ ready' = Append(ready, producer[p].owed)
    /\ producer' = [producer EXCEPT ![p] = IdleProducer(@.posts)]
    /\ UNCHANGED <<queue, status, worker, stopper, phase, mode,
                   accepted, invoked, discarded>>

-----------------------------------------------------------------------------
(* Workers.                                                                *)

(* An idle worker removes the oldest work item from the ready queue.       *)
Take(w) ==
    /\ worker[w].pc = "idle"
    /\ ready # <<>>
    /\ phase # "Stopped"
    /\ ready' = Tail(ready)
    /\ worker' = [worker EXCEPT ![w] = [pc |-> "took", lane |-> Head(ready),
                                        n |-> 0, hand |-> None]]
    /\ UNCHANGED <<queue, status, producer, stopper, phase, mode,
                   accepted, invoked, discarded>>

(* Under the lane mutex: Scheduled -> Draining; w is the only consumer.    *)
DrainBegin(w) ==
    /\ worker[w].pc = "took"
    /\ ~Discarding
    /\ status' = [status EXCEPT ![worker[w].lane] = "Draining"]
    /\ worker' = [worker EXCEPT ![w].pc = "drain"]
    /\ UNCHANGED <<queue, ready, producer, stopper, phase, mode,
                   accepted, invoked, discarded>>

(* Stop(discard) has begun: a worker that took a work item does not drain. *)
GiveUpDrain(w) ==
    /\ worker[w].pc = "took"
    /\ Discarding
    /\ worker' = [worker EXCEPT ![w] = IdleWorker]
    /\ UNCHANGED <<queue, status, ready, producer, stopper, phase, mode,
                   accepted, invoked, discarded>>

(* Without the lane mutex: the drainer pops the lane's oldest item, budget *)
(* permitting.                                                             *)
Pop(w) ==
    LET l == worker[w].lane IN
    /\ worker[w].pc = "drain"
    /\ worker[w].hand = None
    /\ worker[w].n < MaxPerDrain
    /\ queue[l] # <<>>
    /\ queue' = [queue EXCEPT ![l] = Tail(@)]
    /\ worker' = [worker EXCEPT ![w].hand = Head(queue[l])]
    /\ UNCHANGED <<status, ready, producer, stopper, phase, mode,
                   accepted, invoked, discarded>>

(* The pop finds the lane empty: on to the end-of-drain decision.          *)
PopEmpty(w) ==
    /\ worker[w].pc = "drain"
    /\ worker[w].hand = None
    /\ worker[w].n < MaxPerDrain
    /\ queue[worker[w].lane] = <<>>
    /\ worker' = [worker EXCEPT ![w].pc = "decide"]
    /\ UNCHANGED <<queue, status, ready, producer, stopper, phase, mode,
                   accepted, invoked, discarded>>

(* The drainer hands the popped item to the lane's callback.               *)
Invoke(w) ==
    /\ worker[w].pc = "drain"
    /\ worker[w].hand # None
    /\ invoked' = [invoked EXCEPT ![worker[w].lane] = worker[w].hand[1]]
    /\ worker' = [worker EXCEPT ![w].n = @ + 1, ![w].hand = None]
    /\ UNCHANGED <<queue, status, ready, producer, stopper, phase, mode,
                   accepted, discarded>>

(* The drain has stopped popping: budget spent, or a pop found it empty.   *)
DrainOver(w) ==
    \/ worker[w].pc = "decide"
    \/ /\ worker[w].pc = "drain"
       /\ worker[w].hand = None
       /\ worker[w].n >= MaxPerDrain

(* Under the lane mutex: the lane is empty, so it goes Idle.               *)
DrainEndIdle(w) ==
    /\ DrainOver(w)
    /\ queue[worker[w].lane] = <<>>
    /\ status' = [status EXCEPT ![worker[w].lane] = "Idle"]
    /\ worker' = [worker EXCEPT ![w] = IdleWorker]
    /\ UNCHANGED <<queue, ready, producer, stopper, phase, mode,
                   accepted, invoked, discarded>>

(* Under the lane mutex: items are left, so the lane keeps its             *)
(* reservation, and the worker owes a work item at the back of the queue.  *)
DrainEndResubmit(w) ==
    /\ DrainOver(w)
    /\ queue[worker[w].lane] # <<>>
    /\ status' = [status EXCEPT ![worker[w].lane] = "Scheduled"]
    /\ worker' = [worker EXCEPT ![w] = [pc |-> "owes", lane |-> worker[w].lane,
                                        n |-> 0, hand |-> None]]
    /\ UNCHANGED <<queue, ready, producer, stopper, phase, mode,
                   accepted, invoked, discarded>>

(* Outside the lane mutex: the worker puts the lane's work item at the     *)
(* back of the ready queue.                                                *)
WorkerSubmit(w) ==
    /\ worker[w].pc = "owes"
    /\ ready' = Append(ready, worker[w].lane)
    /\ worker' = [worker EXCEPT ![w] = IdleWorker]
    /\ UNCHANGED <<queue, status, producer, stopper, phase, mode,
                   accepted, invoked, discarded>>

(* A callback calls Stop on its own scheduler: refused (Stop would wait    *)
(* for that very callback).  Nothing changes.                              *)
StopFromCallback(w, m) ==
    /\ CallbackStop
    /\ worker[w].pc = "drain"
    /\ worker[w].hand = None
    /\ worker[w].n # 0
    /\ UNCHANGED vars

-----------------------------------------------------------------------------
(* Stop calls.                                                             *)

(* Stop takes effect: admission closes.                                    *)
StopCall(t) ==
    /\ stopper[t] = "idle"
    /\ phase = "Running"
    /\ stopper' = [stopper EXCEPT ![t] = "active"]
    /\ phase' = "Closing"
    /\ mode' = Stops[t]
    /\ UNCHANGED <<queue, status, ready, producer, worker, accepted, invoked, discarded>>

(* A second Stop while one is in progress: refused.                        *)
StopWhileStopping(t) ==
    /\ stopper[t] = "idle"
    /\ phase \in {"Closing", "Stopping"}
    /\ stopper' = [stopper EXCEPT ![t] = "done"]
    /\ UNCHANGED <<queue, status, ready, producer, worker, phase, mode,
                   accepted, invoked, discarded>>

(* Stop on a stopped scheduler: SUCCESS at once.                           *)
StopWhenStopped(t) ==
    /\ stopper[t] = "idle"
    /\ phase = "Stopped"
    /\ stopper' = [stopper EXCEPT ![t] = "done"]
    /\ UNCHANGED <<queue, status, ready, producer, worker, phase, mode,
                   accepted, invoked, discarded>>

(* Every post in flight has settled: from here on no post is accepted.     *)
StopBegin(t) ==
    /\ stopper[t] = "active"
    /\ phase = "Closing"
    /\ ~PostsInFlight
    /\ phase' = "Stopping"
    /\ UNCHANGED <<queue, status, ready, producer, worker, stopper, mode,
                   accepted, invoked, discarded>>

(* Stop(drain) returns once every accepted item ran and every lane is Idle.*)
StopEndDrain(t) ==
    /\ stopper[t] = "active"
    /\ phase = "Stopping"
    /\ mode = "drain"
    /\ ready = <<>>
    /\ WorkersIdle
    /\ \A l \in Lanes : status[l] = "Idle" /\ queue[l] = <<>>
    /\ phase' = "Stopped"
    /\ stopper' = [stopper EXCEPT ![t] = "done"]
    /\ UNCHANGED <<queue, status, ready, producer, worker, mode,
                   accepted, invoked, discarded>>

(* Stop(discard), once no drain is in flight: lane l's items are dropped.  *)
DiscardLane(t, l) ==
    /\ stopper[t] = "active"
    /\ phase = "Stopping"
    /\ mode = "discard"
    /\ WorkersIdle
    /\ queue[l] # <<>>
    /\ queue' = [queue EXCEPT ![l] = <<>>]
    /\ discarded' = [discarded EXCEPT ![l] = @ + Len(queue[l])]
    /\ UNCHANGED <<status, ready, producer, worker, stopper, phase, mode,
                   accepted, invoked>>

(* Stop(discard) returns once every queued item is dropped; reservations   *)
(* are cleared.                                                            *)
StopEndDiscard(t) ==
    /\ stopper[t] = "active"
    /\ phase = "Stopping"
    /\ mode = "discard"
    /\ WorkersIdle
    /\ \A l \in Lanes : queue[l] = <<>>
    /\ phase' = "Stopped"
    /\ ready' = <<>>
    /\ status' = [l \in Lanes |-> "Idle"]
    /\ stopper' = [stopper EXCEPT ![t] = "done"]
    /\ UNCHANGED <<queue, producer, worker, mode, accepted, invoked, discarded>>

-----------------------------------------------------------------------------
(* The steps of each process, and the specification.                       *)

Producer(p) ==
    \/ PostInvalidHandle(p)
    \/ Admit(p)
    \/ PostRefused(p)
    \/ PostFull(p)
    \/ PostAccepted(p)
    \/ ProducerSubmit(p)

Worker(w) ==
    \/ Take(w)
    \/ DrainBegin(w)
    \/ GiveUpDrain(w)
    \/ Pop(w)
    \/ PopEmpty(w)
    \/ Invoke(w)
    \/ DrainEndIdle(w)
    \/ DrainEndResubmit(w)
    \/ WorkerSubmit(w)
    \/ \E m \in Modes : StopFromCallback(w, m)

Stopper(t) ==
    \/ StopCall(t)
    \/ StopWhileStopping(t)
    \/ StopWhenStopped(t)
    \/ StopBegin(t)
    \/ StopEndDrain(t)
    \/ \E l \in Lanes : DiscardLane(t, l)
    \/ StopEndDiscard(t)

(* Every producer and Stop call has finished, and the scheduler is stopped *)
(* or idle with nothing queued: the system is done, not deadlocked.        *)
Done ==
    /\ \A p \in Producers : producer[p].pc = "idle" /\ ~HasPost(p)
    /\ \A t \in Stoppers : stopper[t] = "done"
    /\ WorkersIdle
    /\ \/ phase = "Stopped"
       \/ ready = <<>> /\ \A l \in Lanes : status[l] = "Idle"

(* Once done, the system stutters (so that TLC does not call it deadlock). *)
Terminating == Done /\ UNCHANGED vars

Next ==
    \/ \E p \in Producers : Producer(p)
    \/ \E w \in Workers : Worker(w)
    \/ \E t \in Stoppers : Stopper(t)
    \/ Terminating

(* Every thread that can take a step eventually does.                      *)
Fairness ==
    /\ \A w \in Workers : WF_vars(Worker(w))
    /\ \A p \in Producers : WF_vars(Producer(p))
    /\ \A t \in Stoppers : WF_vars(Stopper(t))

Spec == Init /\ [][Next]_vars /\ Fairness

-----------------------------------------------------------------------------
(* Invariants.                                                             *)

(* A lane that holds items has a reservation: someone will drain it.       *)
(* (During Stop(discard) the items left will be dropped instead.)          *)
NoLostWakeup ==
    Discarding \/ \A l \in Lanes : queue[l] # <<>> => Reservations(l) # 0

(* A post to a Scheduled lane never creates a second reservation.          *)
OneReservationPerLane == \A l \in Lanes : Reservations(l) <= 1

(* The workers draining lane l: they hold it past Take and before the end  *)
(* of the drain.                                                           *)
Drainers(l) == {w \in Workers : worker[w].lane = l
                                /\ worker[w].pc \notin {"idle", "took", "owes"}}

(* Callbacks of one lane never overlap: at most one worker drains it, and  *)
(* only while it is Draining.                                              *)
OneDrainerPerLane ==
    \A l \in Lanes :
        /\ Cardinality(Drainers(l)) <= 1
        /\ Drainers(l) # {} => status[l] = "Draining"
        /\ Drainers(l) = {} => status[l] # "Draining"

(* A submission never finds the ready queue full.                          *)
ReadyQueueBounded == Len(ready) <= ReadyCapacity

(* The workers holding a popped, not yet invoked item of lane l.           *)
InHand(l) == {w \in Workers : worker[w].lane = l /\ worker[w].hand # None}

(* Accepted = invoked + queued + popped-not-yet-invoked + discarded.       *)
Conservation ==
    \A l \in Lanes :
        accepted[l] = invoked[l] + Len(queue[l]) + Cardinality(InHand(l)) + discarded[l]

(* A lane's items are invoked in acceptance order, each once: what is left *)
(* (the items in hand, then the queue) is the next run of positions.       *)
PerLaneFifo ==
    \A l \in Lanes :
        discarded[l] = 0 =>
            LET held == Cardinality(InHand(l)) IN
            /\ Cardinality({worker[w].hand[1] : w \in InHand(l)}) = held
            /\ \A w \in InHand(l) : worker[w].hand[1] \in invoked[l] + 1 .. invoked[l] + held
            /\ \A i \in 1 .. Len(queue[l]) : queue[l][i][1] = invoked[l] + held + i

(* A drain invokes at most MaxPerDrain items.                              *)
BudgetRespected == \A w \in Workers : worker[w].n <= MaxPerDrain

(* After Stop returns, nothing is queued or reserved.                      *)
StoppedMeansQuiet ==
    phase = "Stopped" => /\ \A l \in Lanes : queue[l] = <<>>
                         /\ ready = <<>>

-----------------------------------------------------------------------------
(* Liveness.                                                               *)

AllSettled == \A l \in Lanes : accepted[l] = invoked[l] + discarded[l]

(* Every accepted item is eventually invoked or discarded.                 *)
EveryAcceptedItemSettles == <>[]AllSettled

(* A Stop that took effect eventually returns.                             *)
EveryStopReturns == (phase \in {"Closing", "Stopping"}) ~> (phase = "Stopped")

=============================================================================
