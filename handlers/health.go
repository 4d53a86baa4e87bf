package handlers

import (
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"
)

const serviceName = "sluice"

func (s *server) health(c *fiber.Ctx) error {
	profile := s.opts.Profile
	if profile == "" {
		profile = "default"
	}
	return c.JSON(fiber.Map{"status": "ok", "service": serviceName, "version": s.opts.Version,
		"profile": profile, "ready": s.opts.Ready(), "device": s.opts.Device})
}

func (s *server) livez(c *fiber.Ctx) error {
	return c.JSON(fiber.Map{"status": "ok", "service": serviceName})
}

func (s *server) readyz(c *fiber.Ctx) error {
	if !s.opts.Ready() {
		return s.notReady("Models are still loading", "not_ready")
	}
	return c.JSON(fiber.Map{"status": "ready", "service": serviceName})
}

// modelsLoaded reports the resident models in the shape OpenMed's clients read (its warm
// pool's fields) beside Sluice's own: every configured model is loaded at start and pinned for
// the life of the process, so none has a keep-alive deadline or is loading; each reports its
// footprint, summed in the resident memory. A pooled model still loading is OpenMed's pending
// one: its estimate in its pending_footprint_bytes and in pending_memory_bytes, none of it
// resident.
func (s *server) modelsLoaded(c *fiber.Ctx) error {
	models := fiber.Map{}
	var warm []string
	var resident int64
	for _, r := range s.opts.Routes {
		for _, m := range r.Models {
			if _, listed := models[m.Name]; listed {
				continue // served on several routes (the PII ones, generation's)
			}
			models[m.Name] = fiber.Map{"resident": true, "pinned": true, "loading": false,
				"models": 1, "tokenizers": 1, "pipelines": 1, "keep_alive_seconds_remaining": nil,
				"footprint_bytes": m.Footprint, "pending_footprint_bytes": 0,
				"queue": r.Gate.Queue(), "aliases": m.Aliases, "max_length": m.MaxLength,
				"active_requests": r.Gate.Depth(), "device": s.opts.Device}
			warm = append(warm, m.Name)
			resident += m.Footprint
		}
	}
	out := fiber.Map{"default_keep_alive_seconds": nil, "max_resident_models": nil,
		"memory_budget_bytes": nil, "resident_memory_bytes": resident, "pending_memory_bytes": 0,
		"memory_admission_wait_seconds": nil, "warm_models": warm, "models": models}
	if p := s.opts.Pool; p != nil {
		set := p.Settings()
		if set.DefaultKeepAlive != nil {
			out["default_keep_alive_seconds"] = set.DefaultKeepAlive.Seconds()
		}
		if set.MaxResident > 0 {
			out["max_resident_models"] = set.MaxResident
		}
		if set.MemoryBudget > 0 {
			out["memory_budget_bytes"] = set.MemoryBudget
		}
		out["memory_admission_wait_seconds"] = s.opts.ModelLoadWait.Seconds()
		var pending int64
		for _, m := range p.Models() {
			if _, listed := models[m.Name]; listed || m.Pinned {
				continue // configured: listed and counted above, by its routes' name
			}
			var left any
			if m.KeepAliveLeft != nil {
				left = m.KeepAliveLeft.Seconds()
			}
			held, footprint, waiting := 1, m.Footprint, int64(0)
			var maxLength any = m.MaxLength
			if m.Loading {
				held, footprint, waiting, maxLength = 0, 0, m.Footprint, nil
			}
			resident += footprint
			pending += waiting
			models[m.Name] = fiber.Map{"resident": !m.Loading, "pinned": false, "loading": m.Loading,
				"models": held, "tokenizers": held, "pipelines": held, "keep_alive_seconds_remaining": left,
				"footprint_bytes": footprint, "pending_footprint_bytes": waiting, "queue": m.Name,
				"aliases": []string{}, "max_length": maxLength, "active_requests": m.Active, "device": s.opts.Device}
		}
		out["resident_memory_bytes"], out["pending_memory_bytes"] = resident, pending
	}
	return c.JSON(out)
}

type unloadRequest struct {
	ModelName *string `json:"model_name"`
	All       *bool   `json:"all"`
}

// modelsUnload is OpenMed's POST /models/unload. Sluice's configured models are pinned (loaded
// at start, resident for the life of the process), so they are not unloaded: the answer says
// so in OpenMed's shape, with each model's requests in flight, and "pinned" beside it. With a
// pool, any other name a model directory may have is the pool's to unload, "unloaded": false
// when it is not loaded; without one, a name not loaded is a 422.
func (s *server) modelsUnload(c *fiber.Ctx) error {
	var req unloadRequest
	if err := decodeStrict(c.Body(), &req); err != nil {
		return err
	}
	all := req.All != nil && *req.All
	released := fiber.Map{"models": 0, "tokenizers": 0, "pipelines": 0}
	active := map[string]int{}       // model -> its requests in flight
	canonical := map[string]string{} // model or alias -> model
	var names []string
	for _, r := range s.opts.Routes {
		for _, m := range r.Models {
			if _, seen := active[m.Name]; !seen { // a model's routes share its gate: count it once
				names = append(names, m.Name)
				active[m.Name] = r.Gate.Depth()
			}
			canonical[m.Name] = m.Name
			for _, alias := range m.Aliases {
				canonical[alias] = m.Name
			}
		}
	}
	if all {
		busy := fiber.Map{}
		for name, n := range active {
			if n > 0 {
				busy[name] = n
			}
		}
		unloaded := 0
		if s.opts.Pool != nil {
			var inUse map[string]int
			unloaded, inUse = s.opts.Pool.UnloadAll()
			for name, n := range inUse {
				busy[name] = n
			}
		}
		released["models"], released["tokenizers"], released["pipelines"] = unloaded, unloaded, unloaded
		c.Locals(localOutcome, OutcomeServed)
		return c.JSON(fiber.Map{"unloaded": unloaded > 0, "released": released, "active_models": busy, "pinned_models": names})
	}
	if req.ModelName == nil || strings.TrimSpace(*req.ModelName) == "" {
		return validationError(FieldError{Field: "body", Type: "value_error", Message: "Value error, model_name is required unless all is true"})
	}
	name, ok := canonical[strings.TrimSpace(*req.ModelName)]
	n := active[name]
	if !ok && s.opts.Pool != nil && modelDirName.MatchString(strings.TrimSpace(*req.ModelName)) {
		// A model the pool may load, loaded now or not: OpenMed's answer either way, so that
		// unloading one already gone (a second unload, an expired keep-alive) is no error.
		name = strings.TrimSpace(*req.ModelName)
		u := s.opts.Pool.Unload(name)
		k := 0
		if u.Unloaded {
			k = 1
		}
		c.Locals(localOutcome, OutcomeServed)
		return c.JSON(fiber.Map{"unloaded": u.Unloaded, "model_name": name, "active_requests": u.Active,
			"loading": u.Loading, "released": fiber.Map{"models": k, "tokenizers": k, "pipelines": k}, "pinned": false})
	}
	if !ok {
		slices.Sort(names)
		return validationError(FieldError{Field: "body.model_name", Type: "value_error",
			Message: "Value error, model_name is not a loaded model; loaded: " + strings.Join(names, ", ")})
	}
	c.Locals(localOutcome, OutcomeServed)
	return c.JSON(fiber.Map{"unloaded": false, "model_name": name, "active_requests": n, "loading": false,
		"released": released, "pinned": true})
}

// openAIModels is OpenAI's GET /v1/models: the generation models, created when the server
// was.
func (s *server) openAIModels(created int64) fiber.Handler {
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	list := []model{}
	for _, r := range s.opts.Routes {
		for _, m := range r.Models {
			if r.gen != nil && !slices.ContainsFunc(list, func(l model) bool { return l.ID == m.Name }) {
				list = append(list, model{ID: m.Name, Object: "model", Created: created, OwnedBy: "sluice"})
			}
		}
	}
	return func(c *fiber.Ctx) error {
		return c.JSON(fiber.Map{"object": "list", "data": list})
	}
}
