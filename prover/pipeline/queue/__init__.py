"""The work waiting for a GPU: the queues per proof class, the placement of classes on GPUs and
why a class waits, a fleet host's inbox, and the operators' job actions (cancel, requeue,
cordon)."""
