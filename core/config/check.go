package config

// crossCheck applies the rules that relate traffic to the engine.
func (d *decoder) crossCheck(c *Config) {
	src, e := c.Traffic.Source, &c.Engine
	if src.Type == SourceTrace && src.Format == FormatMooncakeDelta && e.Mode != ModeAggregated {
		d.fail("traffic.source.format", "mooncake-delta requires engine.mode aggregated")
	}
	if src.Type == SourceSynthetic && src.CachedPrefixTokens > 0 {
		for _, r := range e.roles() {
			if bs := r.KVCache.BlockSize; src.CachedPrefixTokens%bs != 0 {
				d.fail("traffic.source.cached_prefix_tokens",
					"must be a multiple of the %s role's block_size %d, got %d", r.Name, bs, src.CachedPrefixTokens)
			}
		}
	}
	if src.Type == SourceTrace && Agentic(src.Format) {
		d.agenticEngine(e)
	}
}

// agenticEngine applies docs/model/config.md ("Agentic restrictions"): agentic
// traffic supports G2 only on static vLLM workers (always true here) with
// attention DP 1 everywhere, no G3, and one aggregated worker, one prefill and
// one decode worker, or several aggregated workers each with a private G2. The
// order of the checks and the messages follow aisimulate's
// validate_agentic_host_offload and tests/test_agentx_g2.py; the rule
// applies to every role once any role has G2, including a P/D role
// without one.
func (d *decoder) agenticEngine(e *Engine) {
	roles := e.roles()
	g2 := false
	for _, r := range roles {
		if r.KVCache.G3Offload != nil {
			d.fail(rolePath(r.Name)+".kv_cache.g3_offload", "agentic replay does not support G3 offload")
		}
		g2 = g2 || r.KVCache.HostOffload != nil
	}
	if !g2 {
		return
	}
	topology := true
	if agg := e.Workers.Aggregated; agg != nil {
		topology = agg.Parallelism.Replicas == 1 ||
			agg.KVCache.HostOffload != nil && agg.KVCache.HostOffload.Scope == ScopeDPRankLocal
	} else {
		topology = e.Workers.Prefill.Parallelism.Replicas == 1 && e.Workers.Decode.Parallelism.Replicas == 1
	}
	if !topology {
		d.fail("engine.workers", "agentic host offload requires one aggregated worker or one prefill and one decode worker")
	}
	for _, r := range roles {
		if r.Parallelism.AttentionData != 1 {
			d.fail(rolePath(r.Name)+".parallelism.attention_data", "agentic host offload requires attention DP=1 on every role")
		}
	}
}
