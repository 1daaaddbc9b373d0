-- At most one Turn holds a terminal: the states of TurnState.HoldsTerminal.
-- A second daemon (or a bug) that reserved another would be refused here.
CREATE UNIQUE INDEX turns_one_holder ON turns(terminal_id)
  WHERE state IN ('dispatching', 'working', 'awaiting_approval', 'awaiting_interaction',
                  'waiting_for_host', 'stalled', 'delivery_uncertain', 'response_uncertain');
