"""wait -> select -> inspect -> judge -> decide -> restart once: one run over its workloads."""
