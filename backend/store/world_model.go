package store

// WorldSpecRow is a row of world_specs; the database refuses to change it.
type WorldSpecRow struct {
	ID                 string  `gorm:"column:id;primaryKey"`
	Name               string  `gorm:"column:name;not null"`
	Domain             string  `gorm:"column:domain;not null"`
	Backend            string  `gorm:"column:backend;not null"`
	ProgramDigest      string  `gorm:"column:program_digest;not null"`
	ProgramSize        int64   `gorm:"column:program_size;not null"`
	InitialStateDigest string  `gorm:"column:initial_state_digest;not null"`
	Params             string  `gorm:"column:params;not null"`
	Seed               int64   `gorm:"column:seed;not null"`
	ParentWorldID      *string `gorm:"column:parent_world_id"`
	ForkID             string  `gorm:"column:fork_id;not null"`
	CreatedAt          int64   `gorm:"column:created_at;not null;autoCreateTime:false"`
}

// TableName implements gorm's Tabler.
func (WorldSpecRow) TableName() string { return "world_specs" }

// WorldRunRow is a row of world_runs.
type WorldRunRow struct {
	ID                 string  `gorm:"column:id;primaryKey"`
	WorldID            string  `gorm:"column:world_id;not null"`
	Status             string  `gorm:"column:status;not null"`
	WorldLocalTime     int64   `gorm:"column:world_local_time;not null"`
	ParentTime         int64   `gorm:"column:parent_time;not null"`
	DeliberationIndex  int64   `gorm:"column:deliberation_index;not null"`
	BaseRunID          *string `gorm:"column:base_run_id"`
	BaseSeq            int64   `gorm:"column:base_seq;not null"`
	LatestCheckpointID string  `gorm:"column:latest_checkpoint_id;not null"`
	Error              string  `gorm:"column:error;not null"`
	CreatedAt          int64   `gorm:"column:created_at;not null;autoCreateTime:false"`
	UpdatedAt          int64   `gorm:"column:updated_at;not null;autoUpdateTime:false"`
}

// TableName implements gorm's Tabler.
func (WorldRunRow) TableName() string { return "world_runs" }

// CheckpointRow is a row of checkpoints.
type CheckpointRow struct {
	ID             string `gorm:"column:id;primaryKey"`
	WorldID        string `gorm:"column:world_id;not null"`
	RunID          string `gorm:"column:run_id;not null"`
	WorldLocalTime int64  `gorm:"column:world_local_time;not null"`
	LedgerSeq      int64  `gorm:"column:ledger_seq;not null"`
	Digest         string `gorm:"column:digest;not null"`
	Size           int64  `gorm:"column:size;not null"`
	CreatedAt      int64  `gorm:"column:created_at;not null;autoCreateTime:false"`
}

// TableName implements gorm's Tabler.
func (CheckpointRow) TableName() string { return "checkpoints" }

// ForkRow is a row of forks.
type ForkRow struct {
	ID             string `gorm:"column:id;primaryKey"`
	ParentWorldID  string `gorm:"column:parent_world_id;not null"`
	ParentRunID    string `gorm:"column:parent_run_id;not null"`
	CheckpointID   string `gorm:"column:checkpoint_id;not null"`
	ChildWorldID   string `gorm:"column:child_world_id;not null;unique"`
	DivergenceType string `gorm:"column:divergence_type;not null"`
	Delta          string `gorm:"column:delta;not null"`
	SeedPolicy     string `gorm:"column:seed_policy;not null"`
	CreatedAt      int64  `gorm:"column:created_at;not null;autoCreateTime:false"`
}

// TableName implements gorm's Tabler.
func (ForkRow) TableName() string { return "forks" }
