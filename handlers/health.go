package handlers

import (
	"sort"

	"github.com/gofiber/fiber/v2"
)

const serviceName = "sluice"

func (s *server) health(c *fiber.Ctx) error {
	return c.JSON(fiber.Map{"status": "ok", "service": serviceName, "version": s.opts.Version,
		"ready": s.opts.Ready()})
}

func (s *server) livez(c *fiber.Ctx) error {
	return c.JSON(fiber.Map{"status": "ok", "service": serviceName})
}

func (s *server) readyz(c *fiber.Ctx) error {
	if !s.opts.Ready() {
		return &apiError{Status: fiber.StatusServiceUnavailable, Code: CodeNotReady,
			Message: "Models are still loading", Outcome: OutcomeRefused,
			Details: map[string]string{"reason": "not_ready"},
			Headers: map[string]string{fiber.HeaderRetryAfter: "1"}}
	}
	return c.JSON(fiber.Map{"status": "ready", "service": serviceName})
}

// modelsLoaded reports the resident models in the shape OpenMed's clients read: Sluice keeps
// every configured model resident for the life of the process, so there is no keep-alive.
func (s *server) modelsLoaded(c *fiber.Ctx) error {
	models := fiber.Map{}
	var warm []string
	for _, ep := range []*Endpoint{&s.opts.Analyze, &s.opts.PII} {
		ex, ok := ep.Models[ep.Default]
		if !ok {
			continue
		}
		var aliases []string
		for name, other := range ep.Models {
			if other == ex && name != ep.Default {
				aliases = append(aliases, name)
			}
		}
		sort.Strings(aliases)
		waiting, running := ex.Depth()
		models[ex.Name()] = fiber.Map{"resident": true, "queue": ep.Queue, "aliases": aliases,
			"max_length": ex.MaxLength(), "active_requests": waiting + running}
		warm = append(warm, ex.Name())
	}
	return c.JSON(fiber.Map{"default_keep_alive_seconds": nil, "max_resident_models": nil,
		"warm_models": warm, "models": models})
}
