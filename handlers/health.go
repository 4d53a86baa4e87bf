package handlers

import (
	"slices"

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

// modelsLoaded reports the resident models in the shape OpenMed's clients read: Sluice keeps
// every configured model resident for the life of the process, so there is no keep-alive.
func (s *server) modelsLoaded(c *fiber.Ctx) error {
	models := fiber.Map{}
	var warm []string
	for _, r := range s.opts.Routes {
		for _, m := range r.Models {
			if _, listed := models[m.Name]; listed {
				continue // served on several routes (generation's)
			}
			models[m.Name] = fiber.Map{"resident": true, "queue": r.Gate.Queue(), "aliases": m.Aliases,
				"max_length": m.MaxLength, "active_requests": r.Gate.Depth(), "device": s.opts.Device}
			warm = append(warm, m.Name)
		}
	}
	return c.JSON(fiber.Map{"default_keep_alive_seconds": nil, "max_resident_models": nil,
		"warm_models": warm, "models": models})
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
